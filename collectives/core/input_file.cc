// The one opener of input files (input_file.h).
#include "collectives/core/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <utility>

#include "collectives/core/error_text.h"
#include "collectives/core/errors.h"

namespace cclab {
namespace {

[[noreturn]] void refuse(std::string_view where, const std::string& why) { throw InvalidArgument(std::string(where) + ": " + why); }

std::string tooLarge(std::uint64_t size, std::uint64_t maxBytes, bool atLeast) {
  return (atLeast ? "is more than " : "is " + std::to_string(size) + " bytes, more than ") + std::to_string(maxBytes) +
         " bytes, the most an input file can be";
}

class Descriptor {
 public:
  explicit Descriptor(int fd) : fd_(fd) {}
  ~Descriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

}  // namespace

int openInputFile(const std::string& path, std::string_view where, std::uint64_t maxBytes) {
  if (path.empty()) refuse(where, "an empty path");
  // O_NONBLOCK: opening a FIFO with no writer returns at once (and the fstat below refuses it) instead
  // of blocking until a writer comes; on a regular file it changes nothing.
  Descriptor fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (fd.get() < 0) refuse(where, errno == ENOENT ? std::string("no such file") : std::string("cannot open it: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) refuse(where, std::string("cannot read its status: ") + std::strerror(errno));
  if (!S_ISREG(st.st_mode))  // a pipe (`<(cat x)`) is a FIFO too: it cannot be read twice or sized
    refuse(where, fileKindText(st.st_mode) + (S_ISFIFO(st.st_mode) ? " (save it to a file first)" : ""));
  if (static_cast<std::uint64_t>(st.st_size) > maxBytes) refuse(where, tooLarge(static_cast<std::uint64_t>(st.st_size), maxBytes, false));
  return fd.release();
}

std::string readInputFile(const std::string& path, std::string_view where, std::uint64_t maxBytes, InputContent content) {
  Descriptor fd(openInputFile(path, where, maxBytes));
  std::string text;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) refuse(where, std::string("cannot read it: ") + std::strerror(errno));
    if (n == 0) break;
    // Read past the cap only by one buffer: a file that grew after the size check is still bounded.
    if (text.size() + static_cast<std::uint64_t>(n) > maxBytes) refuse(where, tooLarge(0, maxBytes, true));
    text.append(buffer, static_cast<std::size_t>(n));
  }
  if (content == InputContent::Text) {
    const auto nul = text.find('\0');
    if (nul != std::string::npos) {
      const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(nul), '\n');
      refuse(where, "a NUL byte at line " + std::to_string(line) + ": not a text file");
    }
  }
  return text;
}

bool hasExtension(std::string_view path, std::string_view ext) {
  if (path.size() <= ext.size()) return false;
  const std::string_view tail = path.substr(path.size() - ext.size());
  return std::equal(tail.begin(), tail.end(), ext.begin(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
  });
}

}  // namespace cclab
