// IDX files (the MNIST format), optionally gzip-compressed, read through zlib.
// Layout: magic 0x0000 TT NN (TT = element type, 0x08 = unsigned byte; NN = number of dimensions),
// then NN big-endian uint32 dimensions, then the elements.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

namespace cclab::trainer {

inline constexpr std::uint8_t kIdxUnsignedByte = 0x08;

struct IdxArray {
  std::vector<std::int64_t> dims;
  std::vector<std::uint8_t> data;  // product(dims) elements
};

// Reads an unsigned-byte IDX file (gzip or plain). Throws InvalidArgument for a missing or unreadable
// file and Error for a truncated or corrupt one; every message names the path.
IdxArray readIdxFile(const std::filesystem::path& path);

}  // namespace cclab::trainer
