// libFuzzer target: the command-line size parser (nccl-tests' -b/-e spelling). Any text must either
// parse to a size in [0, the parser's limit] or throw; never crash or overflow. A parsed size must print
// (formatBytes) without throwing.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

#include "collectives/conventions/size.h"

namespace {
std::int64_t parse(std::string_view text) { return cclab::conventions::parseSize(text, "-b"); }
std::string format(std::int64_t bytes) { return cclab::conventions::formatBytes(bytes); }
constexpr std::int64_t kMaxSize = cclab::conventions::kMaxSizeBytes;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::int64_t bytes = 0;
  try {
    bytes = parse(text);
  } catch (const std::exception&) {
    return 0;  // refused with a message: the contract
  }
  if (bytes < 0 || bytes > kMaxSize) std::abort();  // a size is never negative or beyond the parser's limit
  (void)format(bytes);
  return 0;
}
