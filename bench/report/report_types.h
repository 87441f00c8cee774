// The conventions (collectives/conventions) the bench code names unqualified: the sweep, the result
// rows, the table and the results JSON are those of cclab-sim too.
#pragma once

#include "collectives/conventions/bandwidth.h"
#include "collectives/conventions/result.h"
#include "collectives/conventions/results_json.h"
#include "collectives/conventions/size.h"
#include "collectives/conventions/sweep.h"
#include "collectives/conventions/table.h"

namespace cclab::bench {

using conventions::Measurement;
using conventions::ResultLog;
using conventions::ResultRow;
using conventions::SweepOptions;
using conventions::TablePrinter;

}  // namespace cclab::bench
