// main() of every *_perf tool: parse, pick the backend, print the header, run the sweep, print the
// footer, write -J. Exit status: 0; 1 for a runtime error (TimeoutError, ...) or any #wrong > 0;
// 2 for bad usage or an unavailable backend. Every error is one line on stderr.
#pragma once

#include "collectives/plan/plan.h"

namespace cclab::bench {

int perfMain(int argc, const char* const* argv, plan::Collective collective);

// Every CCLAB_* knob set in the environment parsed (collectives/core/knobs.h); a bad one throws
// UsageError naming it. The tools call it at start, after --help.
void checkKnobs();

}  // namespace cclab::bench
