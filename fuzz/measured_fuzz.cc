// libFuzzer target: the measured-results reader (sim/measured.h, loadMeasurement: the JSON that
// *_perf -J writes). Any bytes must either load or throw; a loaded measurement is sane.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "fuzz/fuzz_input_file.h"
#include "sim/measured.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto m = cclab::fuzz::readInputFile("measured", data, size, cclab::sim::loadMeasurement);
  if (m && (m->nranks < 1 || m->elemSize < 1)) std::abort();
  return 0;
}
