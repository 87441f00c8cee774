// libFuzzer target: the IDX loader (trainer/data/idx_file.h, readIdxFile, plain or gzip). Any bytes
// must either load or throw; a loaded array holds exactly product(dims) elements.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "fuzz/fuzz_input_file.h"
#include "trainer/data/idx_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto a = cclab::fuzz::readInputFile("idx", data, size,
                                            [](const std::string& path) { return cclab::trainer::readIdxFile(path); });
  if (!a) return 0;
  std::uint64_t elements = 1;
  for (const std::int64_t d : a->dims) {
    if (d < 0) std::abort();
    elements *= static_cast<std::uint64_t>(d);
  }
  if (a->dims.empty() || elements != a->data.size()) std::abort();
  return 0;
}
