// libFuzzer target: the nccl-tests log reader (sim/nccl_tests_log.h, loadNcclTestsLog). Any bytes must
// either read or throw; a read log must hold runs with ranks and rows whose times are positive and whose
// size and count are those of a row of its collective, with every skipped row counted.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "fuzz/fuzz_input_file.h"
#include "sim/nccl_tests_log.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto log = cclab::fuzz::readInputFile("nccl-tests-log", data, size, [](const std::string& path) {
    return cclab::sim::loadNcclTestsLog(path, cclab::plan::Collective::AllReduce);
  });
  if (!log) return 0;
  if (log->runs.empty() || log->skippedRows < 0 || log->droppedCells < 0) std::abort();
  for (const auto& run : log->runs) {
    if (run.nranks <= 0 || run.rows.empty()) std::abort();
    for (const auto& r : run.rows) {
      if (r.size <= 0 || r.count < 0 || (r.oopTime <= 0 && r.ipTime <= 0) || r.oopTime < 0 || r.ipTime < 0) std::abort();
    }
  }
  return 0;
}
