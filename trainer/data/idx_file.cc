#include "trainer/data/idx_file.h"

#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <limits>
#include <memory>
#include <string>
#include <system_error>

#include "collectives/conventions/limits.h"
#include "collectives/conventions/memory_budget.h"
#include "collectives/core/errors.h"
#include "collectives/core/input_file.h"

namespace cclab::trainer {
namespace {

constexpr std::size_t kReadChunk = 1 << 20;
constexpr std::size_t kHeaderBytes = 4;
constexpr std::size_t kDimBytes = 4;
constexpr int kMaxDims = 8;

struct GzCloser {
  void operator()(gzFile_s* f) const { gzclose(f); }
};

// A gzip stream read as far as asked: the header first, then exactly the payload it claims, so a small
// file claiming (or inflating to) gigabytes is refused before it is inflated.
class GzReader {
 public:
  explicit GzReader(const std::filesystem::path& path) : path_(path) {
    // The one opener's refusals (a missing file, a directory, a FIFO with no writer, a device), and
    // the compressed file itself bounded by the payload's limit.
    const int fd = openInputFile(path.string(), "data file '" + path.string() + "'", static_cast<std::uint64_t>(conventions::kMaxDataFileBytes));
    f_.reset(gzdopen(fd, "rb"));
    if (!f_) {
      ::close(fd);
      throw InvalidArgument("cannot open data file " + path.string());
    }
  }

  // Reads up to `n` bytes into `out`; returns how many came (fewer only at the end of the stream).
  std::size_t read(std::uint8_t* out, std::size_t n) {
    std::size_t done = 0;
    while (done < n) {
      const auto want = static_cast<unsigned>(std::min(n - done, kReadChunk));
      const int got = gzread(f_.get(), out + done, want);
      if (got < 0) fail("corrupt gzip data in ");
      if (got == 0) break;
      done += static_cast<std::size_t>(got);
    }
    if (done < n) {
      int code = 0;
      gzerror(f_.get(), &code);
      if (code != Z_OK && code != Z_STREAM_END) fail("corrupt or truncated gzip data in ");
    }
    return done;
  }

 private:
  [[noreturn]] void fail(const char* what) {
    int code = 0;
    const char* msg = gzerror(f_.get(), &code);
    throw Error(what + path_.string() + ": " + (msg ? msg : "unknown zlib error"));
  }

  std::filesystem::path path_;
  std::unique_ptr<gzFile_s, GzCloser> f_;
};

std::uint32_t bigEndian32(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | std::uint32_t{p[3]};
}

}  // namespace

IdxArray readIdxFile(const std::filesystem::path& path) {
  GzReader in(path);
  const std::string where = "IDX file " + path.string();
  std::array<std::uint8_t, kHeaderBytes + kDimBytes * kMaxDims> header{};
  if (in.read(header.data(), kHeaderBytes) < kHeaderBytes) throw Error(where + " is truncated: no header");
  if (header[0] != 0 || header[1] != 0) throw Error(where + " is corrupt: bad magic number");
  if (header[2] != kIdxUnsignedByte)
    throw Error(where + ": element type " + std::to_string(header[2]) + " is not unsigned byte (8)");
  const int ndims = header[3];
  if (ndims < 1 || ndims > kMaxDims) throw Error(where + " is corrupt: " + std::to_string(ndims) + " dimensions");
  const std::size_t dimBytes = kDimBytes * static_cast<std::size_t>(ndims);
  if (in.read(header.data() + kHeaderBytes, dimBytes) < dimBytes) throw Error(where + " is truncated inside its header");
  IdxArray a;
  std::int64_t elements = 1;
  for (int d = 0; d < ndims; ++d) {
    const std::int64_t n = bigEndian32(header.data() + kHeaderBytes + kDimBytes * static_cast<std::size_t>(d));
    if (n > 0 && elements > std::numeric_limits<std::int64_t>::max() / n) throw Error(where + " is corrupt: dimensions overflow");
    elements *= n;
    a.dims.push_back(n);
  }
  // What the header claims, bounded before a byte of it is inflated or allocated.
  conventions::requireAtMost(elements, conventions::kMaxDataFileBytes, where + ": the payload its header claims (bytes)",
                             "a data file's limit");
  if (const auto available = conventions::hostMemoryAvailable())
    conventions::requireMemory(elements, *available, where, "host memory (MemAvailable)");
  // The buffer grows with the bytes that really arrive (doubling, capped at the claim), so a short file
  // whose header claims gigabytes never allocates more than about twice what it holds.
  const auto want = static_cast<std::size_t>(elements);
  std::size_t have = 0;
  while (have < want) {
    const std::size_t next = std::min(want, std::max<std::size_t>(2 * have, kReadChunk));
    a.data.resize(next);
    const std::size_t got = in.read(a.data.data() + have, next - have);
    have += got;
    if (have < next) break;
  }
  if (have < want)
    throw Error(where + " is truncated: " + std::to_string(have) + " of " + std::to_string(elements) + " elements");
  // Bytes past the payload: counted a chunk at a time up to one chunk, never inflated whole.
  std::vector<std::uint8_t> rest(kReadChunk);
  const std::size_t extra = in.read(rest.data(), rest.size());
  if (extra == rest.size())
    throw Error(where + " is corrupt: more than " + std::to_string(extra) + " bytes after the last element");
  if (extra > 0) throw Error(where + " is corrupt: " + std::to_string(extra) + " bytes after the last element");
  return a;
}

}  // namespace cclab::trainer
