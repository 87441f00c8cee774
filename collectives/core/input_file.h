// Input files every reader opens (topology JSON and NCCL dumps, nccl-tests logs, measured results,
// algorithm files, trainer baselines and weights): one opener, so every reader refuses the same inputs
// with the same words, before it reads a byte it cannot afford:
//
// - a regular file only (a symlink counts as what it resolves to): a directory, a FIFO, a pipe such as
//   `<(cat x)`, a socket or a device (`ln -s /dev/zero x.xml`) is refused. The open never blocks: it is
//   made with O_NONBLOCK, so a FIFO with no writer is refused instead of waiting for one forever;
// - its size bounded before reading (the caller's cap), and again while reading (a file that grows);
// - text inputs hold no NUL byte: a number with a NUL inside (`68\0 52`) would otherwise read as its
//   prefix in one reader and as garbage in another.
//
// Errors are InvalidArgument (exit 2), "<where>: <reason>", `where` being the reader's own words
// ("nccl topology 'x.xml'", "file:x.json").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace cclab {

// The largest input file a tool reads whole (a topology, a log, a measured file): 64 MiB. An
// nccl-tests log of 3000 runs is a few MB; a topology dump of 72 GPUs a few hundred KB.
inline constexpr std::uint64_t kMaxInputFileBytes = std::uint64_t{64} << 20;

enum class InputContent { Text, Binary };

// The whole file at `path`, or InvalidArgument "<where>: <reason>" (no such file, is a directory,
// is a FIFO, not a regular file, is N bytes (more than the M an input can be), a NUL byte at line L).
[[nodiscard]] std::string readInputFile(const std::string& path, std::string_view where, std::uint64_t maxBytes = kMaxInputFileBytes,
                                        InputContent content = InputContent::Text);

// Opens `path` for reading as readInputFile does (regular file, never blocking, size up to maxBytes)
// and returns the descriptor, for a reader that streams (gzip): the caller closes it.
[[nodiscard]] int openInputFile(const std::string& path, std::string_view where, std::uint64_t maxBytes);

// Whether `path` ends in `ext` (".xml"), letters compared without case: `x.XML` is an XML file.
[[nodiscard]] bool hasExtension(std::string_view path, std::string_view ext);

}  // namespace cclab
