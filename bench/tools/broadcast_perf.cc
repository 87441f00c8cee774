// broadcast_perf: nccl-tests' broadcast_perf on cclab's Communicator (see bench/harness/perf_main.h, docs/bench.md).
#include "bench/harness/perf_main.h"

int main(int argc, char** argv) { return cclab::bench::perfMain(argc, argv, cclab::plan::Collective::Broadcast); }
