// The '#' lines above a harness table: what ran, where and how (nccl-tests prints the same kind).
#pragma once

#include "bench/harness/harness_options.h"
#include "bench/report/machine_info.h"
#include "bench/report/report_types.h"

namespace cclab::bench {

// The algorithm line names what runs: plan::generatedAlgorithm (broadcast/reduce --algo dbtree run the
// tree), with the request beside it when they differ.
void printRunHeader(const TablePrinter& table, const char* tool, plan::Collective c, const HarnessOptions& o,
                    const Communicator& comm, const MachineInfo& machine, const std::string& date);

}  // namespace cclab::bench
