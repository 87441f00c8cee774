// libFuzzer target: the command-line size parser (bench/report/value_parse.h, nccl-tests' -b/-e
// spelling). Any text must either parse to a non-negative size or throw; never crash or overflow.
// A parsed size must print (formatBytes) without throwing.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <string_view>

#include "bench/report/value_parse.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::int64_t bytes = 0;
  try {
    bytes = cclab::bench::parseSize(text);
  } catch (const std::exception&) {
    return 0;  // refused with a message: the contract
  }
  if (bytes < 0) std::abort();  // a size is never negative
  (void)cclab::bench::formatBytes(bytes);
  return 0;
}
