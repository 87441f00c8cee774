// Fuzz helper: the readers under test take a path, so each input is written to one temporary file per
// fuzzing process (under $TMPDIR, else /tmp) and read back through the same code a tool uses. A reader
// may refuse an input by throwing (the contract); anything else a sanitizer or the target reports.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <optional>
#include <string>

#include <unistd.h>

namespace cclab::fuzz {

// Writes `size` bytes to this process's temporary file named after `tag` and returns its path.
inline const std::string& writeInputFile(const char* tag, const std::uint8_t* data, std::size_t size) {
  static const std::string path = [tag] {
    const char* dir = std::getenv("TMPDIR");
    return std::string(dir && *dir ? dir : "/tmp") + "/cclab-fuzz-" + tag + "-" + std::to_string(getpid());
  }();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  out.close();
  if (!out) std::abort();  // the harness itself failed, not the reader
  return path;
}

// Writes the input to this process's file and returns read(path), or nothing when read refused it.
template <class Read>
auto readInputFile(const char* tag, const std::uint8_t* data, std::size_t size, Read read)
    -> std::optional<decltype(read(std::string()))> {
  const std::string& path = writeInputFile(tag, data, size);
  try {
    return read(path);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace cclab::fuzz
