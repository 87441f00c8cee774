// The data's summary for the start-of-job agreement (data_fingerprint.h).
#include "trainer/data/data_fingerprint.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "collectives/conventions/limits.h"
#include "collectives/core/errors.h"
#include "collectives/core/input_file.h"
#include "trainer/data/fashion_mnist.h"

namespace cclab::trainer {
namespace {

constexpr std::uint64_t kHashStart = 0xcbf29ce484222325ULL;  // FNV-1a's offset basis
constexpr std::uint64_t kHashPrime = 0x100000001b3ULL;       // FNV-1a's prime
constexpr std::size_t kChunkBytes = std::size_t{1} << 20;

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

// Closes a descriptor on every path.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  [[nodiscard]] int get() const { return fd_; }

 private:
  int fd_;
};

// Fills `buf` from fd unless the file ends first; the bytes read, or -1 (errno set).
ssize_t readFull(int fd, std::byte* buf, std::size_t bytes) {
  std::size_t got = 0;
  while (got < bytes) {
    const ssize_t n = ::read(fd, buf + got, bytes - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  return static_cast<ssize_t>(got);
}

// Folds one file into `hash` and `total`; the empty string, or why it could not be read.
std::string hashFile(const std::filesystem::path& path, std::uint64_t& hash, std::uint64_t& total) {
  const std::string name = path.filename().string();
  int opened = -1;
  try {
    // The readers' own opener: regular files only, never blocking on a FIFO, within the data limit.
    opened = openInputFile(path.string(), name, static_cast<std::uint64_t>(conventions::kMaxDataFileBytes));
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  const Fd fd(opened);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return name + ": unreadable: " + std::strerror(errno);
  const auto size = static_cast<std::uint64_t>(st.st_size);
  total += size;
  hash = (hash ^ size) * kHashPrime;
  std::uint64_t left = size;
  std::vector<std::byte> buf(kChunkBytes);
  while (left > 0) {
    const ssize_t n = readFull(fd.get(), buf.data(), std::min<std::uint64_t>(left, kChunkBytes));
    if (n < 0) return name + ": unreadable: " + std::strerror(errno);
    if (n == 0) break;  // shrank while read: the hash differs from a whole copy's, as it should
    hash = hashBytes(buf.data(), static_cast<std::size_t>(n), hash);
    left -= static_cast<std::uint64_t>(n);
  }
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
