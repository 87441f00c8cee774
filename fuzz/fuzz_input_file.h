// Fuzz helper: the readers under test take a path, so each input is written to one temporary file per
// fuzzing process (under $TMPDIR, else /tmp) and read back through the same code a tool uses.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
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

}  // namespace cclab::fuzz
