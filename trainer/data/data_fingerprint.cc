// The data's summary for the start-of-job agreement (data_fingerprint.h).
#include "trainer/data/data_fingerprint.h"


#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string_view>

#include <fmt/format.h>

#include "collectives/conventions/limits.h"
#include "collectives/core/errors.h"
#include "collectives/core/input_file.h"
#include "trainer/data/fashion_mnist.h"

namespace cclab::trainer {
namespace {

constexpr std::uint64_t kHashStart = 0xcbf29ce484222325ULL;  // FNV-1a's offset basis
constexpr std::uint64_t kHashPrime = 0x100000001b3ULL;       // FNV-1a's prime

// FNV-1a style over 8-byte words, continued from `state` (an accidental difference, not an
// adversary, is what it must catch).
std::uint64_t hashBytes(const void* data, std::size_t bytes, std::uint64_t state) {
  const auto* p = static_cast<const unsigned char*>(data);
  std::size_t i = 0;
  // Eight bytes a step (FNV-1a's xor-multiply on words, with a shift so high bits reach low ones), so
  // the hash keeps up with the reads (data_fingerprint.h has the time measured).
  for (; i + 8 <= bytes; i += 8) {
    std::uint64_t w = 0;
    std::memcpy(&w, p + i, 8);
    state = (state ^ w) * kHashPrime;
    state ^= state >> 29;
  }
  for (; i < bytes; ++i) state = (state ^ p[i]) * kHashPrime;
  return state;
}

// Folds one file into `hash` and `total`; the empty string, or why it could not be read. The file is
// read whole by the readers' own opener (regular files only, never blocking on a FIFO, within the data
// limit), as the load that follows reads it.
std::string hashFile(const std::filesystem::path& path, std::uint64_t& hash, std::uint64_t& total) {
  std::string bytes;
  try {
    bytes = readInputFile(path.string(), path.filename().string(), static_cast<std::uint64_t>(conventions::kMaxDataFileBytes),
                          InputContent::Binary);
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  const auto size = static_cast<std::uint64_t>(bytes.size());
  total += size;
  hash = (hash ^ size) * kHashPrime;
  hash = hashBytes(bytes.data(), bytes.size(), hash);
  return {};
}

std::string fashionMnistFingerprint(const std::filesystem::path& dir) {
  std::uint64_t hash = kHashStart;
  std::uint64_t total = 0;
  for (const std::string_view file : {kTrainImagesFile, kTrainLabelsFile, kTestImagesFile, kTestLabelsFile}) {
    const std::string problem = hashFile(dir / file, hash, total);
    if (!problem.empty()) return problem;
  }
  return fmt::format("content {:016x}, {} bytes", hash, total);
}

}  // namespace

std::pair<std::string, std::string> dataAgreementField(const DataSource& source) {
  if (source.name == "synthetic") return {"--synthetic-samples", std::to_string(source.synthetic.trainSamples)};
  return {"--data-dir", fashionMnistFingerprint(source.dir)};
}

}  // namespace cclab::trainer
