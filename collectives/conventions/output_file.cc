#include "collectives/conventions/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "collectives/core/errors.h"

namespace cclab::conventions {
namespace {

std::filesystem::path directoryOf(const std::filesystem::path& path) {
  auto dir = path.parent_path();
  return dir.empty() ? std::filesystem::path(".") : dir;
}

// Creates a unique file beside `path` (mkstemp); returns its descriptor and name, or throws.
int createTemporary(const std::filesystem::path& path, std::string& name, const std::string& what) {
  std::string leaf = ".";
  leaf.append(path.filename().string()).append(".tmp.XXXXXX");
  name = (directoryOf(path) / leaf).string();
  int fd = ::mkstemp(name.data());
  if (fd < 0)
    throw InvalidArgument(what + " '" + path.string() + "': cannot create a file in " + directoryOf(path).string() +
                          ": " + std::strerror(errno));
  return fd;
}

}  // namespace

void checkWritable(const std::filesystem::path& path, std::string_view what) {
  const std::string label(what);
  if (path.empty()) throw InvalidArgument(label + ": empty path");
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw InvalidArgument(label + " '" + path.string() + "': is a directory");
  if (std::filesystem::exists(path, ec) && ::access(path.c_str(), W_OK) != 0)
    throw InvalidArgument(label + " '" + path.string() + "': not writable: " + std::strerror(errno));
  std::string name;
  int fd = createTemporary(path, name, label);
  ::close(fd);
  ::unlink(name.c_str());
}

void writeFileAtomically(const std::filesystem::path& path, std::string_view content) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw Error("cannot write '" + path.string() + "': is a directory");
  std::string name;
  int fd = createTemporary(path, name, "cannot write");
  const char* p = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      std::string why = std::strerror(errno);
      ::close(fd);
      ::unlink(name.c_str());
      throw Error("cannot write '" + path.string() + "': " + why);
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  // mkstemp makes the file 0600; results are for everyone on the machine to read, as a plain open would be.
  ::fchmod(fd, 0644);
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    std::string why = std::strerror(errno);
    ::unlink(name.c_str());
    throw Error("cannot write '" + path.string() + "': " + why);
  }
  if (::rename(name.c_str(), path.c_str()) != 0) {
    std::string why = std::strerror(errno);
    ::unlink(name.c_str());
    throw Error("cannot write '" + path.string() + "': " + why);
  }
}

}  // namespace cclab::conventions
