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

std::string kindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "is a directory";
  if (S_ISCHR(mode)) return "is a character device, not a regular file";
  if (S_ISBLK(mode)) return "is a block device, not a regular file";
  if (S_ISFIFO(mode)) return "is a FIFO, not a regular file";
  if (S_ISSOCK(mode)) return "is a socket, not a regular file";
  return "is not a regular file";
}

// The file the write replaces: `path` itself (new, or an existing regular file), or the file a symlink
// at `path` resolves to. Throws `Ex` for anything else that exists (left untouched) and for a dangling
// link. A path whose directory is missing comes back as is: creating the temporary file reports it.
template <class Ex>
std::filesystem::path replaceTarget(const std::filesystem::path& path, const std::string& label) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return path;
  std::filesystem::path target = path;
  if (S_ISLNK(st.st_mode)) {
    std::error_code ec;
    target = std::filesystem::canonical(path, ec);
    if (ec || ::stat(target.c_str(), &st) != 0)
      throw Ex(label + " '" + path.string() + "': a symlink to a missing file (" + ec.message() + ")");
  }
  if (!S_ISREG(st.st_mode))
    throw Ex(label + " '" + path.string() + "'" + (target == path ? "" : " (-> '" + target.string() + "')") + ": " +
             kindOf(st.st_mode) + "; left untouched");
  return target;
}

}  // namespace

void checkWritable(const std::filesystem::path& path, std::string_view what) {
  const std::string label(what);
  if (path.empty()) throw InvalidArgument(label + ": empty path");
  const std::filesystem::path target = replaceTarget<InvalidArgument>(path, label);
  if (::access(target.c_str(), F_OK) == 0 && ::access(target.c_str(), W_OK) != 0)
    throw InvalidArgument(label + " '" + path.string() + "': not writable: " + std::strerror(errno));
  std::string name;
  int fd = createTemporary(target, name, label);
  ::close(fd);
  ::unlink(name.c_str());
}

void writeFileAtomically(const std::filesystem::path& path, std::string_view content) {
  if (path.empty()) throw Error("cannot write: empty path");
  const std::filesystem::path target = replaceTarget<Error>(path, "cannot write");
  std::string name;
  int fd = createTemporary(target, name, "cannot write");
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
  if (::rename(name.c_str(), target.c_str()) != 0) {
    std::string why = std::strerror(errno);
    ::unlink(name.c_str());
    throw Error("cannot write '" + path.string() + "': " + why);
  }
}

}  // namespace cclab::conventions
