#include "trainer/data/idx_file.h"

#include <zlib.h>

#include <array>
#include <limits>
#include <memory>
#include <string>
#include <system_error>

#include "collectives/core/errors.h"

namespace cclab::trainer {
namespace {

constexpr std::size_t kReadChunk = 1 << 20;
constexpr std::size_t kHeaderBytes = 4;
constexpr std::size_t kDimBytes = 4;
constexpr int kMaxDims = 8;

struct GzCloser {
  void operator()(gzFile_s* f) const { gzclose(f); }
};

std::vector<std::uint8_t> readAll(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw InvalidArgument("data file " + path.string() + " does not exist or is not a file");
  std::unique_ptr<gzFile_s, GzCloser> f(gzopen(path.c_str(), "rb"));
  if (!f) throw InvalidArgument("cannot open data file " + path.string());
  std::vector<std::uint8_t> out;
  for (;;) {
    const std::size_t old = out.size();
    out.resize(old + kReadChunk);
    const int got = gzread(f.get(), out.data() + old, static_cast<unsigned>(kReadChunk));
    if (got < 0) {
      int code = 0;
      const char* msg = gzerror(f.get(), &code);
      throw Error("corrupt gzip data in " + path.string() + ": " + (msg ? msg : "unknown zlib error"));
    }
    out.resize(old + static_cast<std::size_t>(got));
    if (got == 0) break;
  }
  int code = 0;
  const char* msg = gzerror(f.get(), &code);
  if (code != Z_OK && code != Z_STREAM_END)
    throw Error("corrupt or truncated gzip data in " + path.string() + ": " + (msg ? msg : "unknown zlib error"));
  return out;
}

std::uint32_t bigEndian32(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | std::uint32_t{p[3]};
}

}  // namespace

IdxArray readIdxFile(const std::filesystem::path& path) {
  std::vector<std::uint8_t> bytes = readAll(path);
  const std::string where = "IDX file " + path.string();
  if (bytes.size() < kHeaderBytes) throw Error(where + " is truncated: no header");
  if (bytes[0] != 0 || bytes[1] != 0) throw Error(where + " is corrupt: bad magic number");
  if (bytes[2] != kIdxUnsignedByte)
    throw Error(where + ": element type " + std::to_string(bytes[2]) + " is not unsigned byte (8)");
  const int ndims = bytes[3];
  if (ndims < 1 || ndims > kMaxDims) throw Error(where + " is corrupt: " + std::to_string(ndims) + " dimensions");
  const std::size_t dataStart = kHeaderBytes + kDimBytes * static_cast<std::size_t>(ndims);
  if (bytes.size() < dataStart) throw Error(where + " is truncated inside its header");
  IdxArray a;
  std::int64_t elements = 1;
  for (int d = 0; d < ndims; ++d) {
    const std::int64_t n = bigEndian32(bytes.data() + kHeaderBytes + kDimBytes * static_cast<std::size_t>(d));
    if (n > 0 && elements > std::numeric_limits<std::int64_t>::max() / n) throw Error(where + " is corrupt: dimensions overflow");
    elements *= n;
    a.dims.push_back(n);
  }
  const auto have = static_cast<std::int64_t>(bytes.size() - dataStart);
  if (have < elements)
    throw Error(where + " is truncated: " + std::to_string(have) + " of " + std::to_string(elements) + " elements");
  if (have > elements)
    throw Error(where + " is corrupt: " + std::to_string(have - elements) + " bytes after the last element");
  a.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(dataStart), bytes.end());
  return a;
}

}  // namespace cclab::trainer
