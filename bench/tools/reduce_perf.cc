// reduce_perf: nccl-tests' reduce_perf on cclab's Communicator (see bench/harness/perf_main.h, docs/bench.md).
#include "bench/harness/perf_main.h"

int main(int argc, char** argv) { return cclab::bench::perfMain(argc, argv, cclab::plan::Collective::Reduce); }
