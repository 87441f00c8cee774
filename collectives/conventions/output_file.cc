#include "collectives/conventions/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "collectives/core/error_text.h"
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
             fileKindText(st.st_mode) + "; left untouched");
  return target;
}

// What a path names, to compare outputs: an existing file by its device and inode (through symlinks;
// hard links share the inode), any path by its absolute form with the existing directories resolved.
struct FileIdentity {
  bool exists = false;
  dev_t device = 0;
  ino_t inode = 0;
  std::filesystem::path resolved;
};

FileIdentity identityOf(const std::filesystem::path& path) {
  FileIdentity id;
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    id.exists = true;
    id.device = st.st_dev;
    id.inode = st.st_ino;
  }
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::absolute(path, ec);
  id.resolved = std::filesystem::weakly_canonical(absolute, ec);  // "./x", "d/../x", symlinked directories
  if (ec) id.resolved = absolute.lexically_normal();
  return id;
}

bool sameFile(const FileIdentity& a, const FileIdentity& b) {
  if (a.exists && b.exists) return a.device == b.device && a.inode == b.inode;
  return a.resolved == b.resolved;
}

}  // namespace

// SIGXFSZ's default action kills the process at a write past RLIMIT_FSIZE, before any error path can
// remove the temporary file or a tool's shared segments. Checked at every writer (two system calls).
void ignoreFileSizeSignal() noexcept {
  struct sigaction current {};
  if (::sigaction(SIGXFSZ, nullptr, &current) != 0 || (current.sa_flags & SA_SIGINFO) != 0 || current.sa_handler != SIG_DFL) return;
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  ::sigaction(SIGXFSZ, &ignore, nullptr);
}

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
  AtomicFileWriter file(path);
  file.write(content);
  file.commit();
}

AtomicFileWriter::AtomicFileWriter(const std::filesystem::path& path) : path_(path) {
  if (path.empty()) throw Error("cannot write: empty path");
  ignoreFileSizeSignal();
  target_ = replaceTarget<Error>(path, "cannot write");
  struct stat st {};
  if (::stat(target_.c_str(), &st) == 0) mode_ = st.st_mode & 0777;  // a replaced file keeps its permissions
  fd_ = createTemporary(target_, temporary_, "cannot write");
}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (!temporary_.empty()) ::unlink(temporary_.c_str());
}

void AtomicFileWriter::fail(const std::string& why) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!temporary_.empty()) ::unlink(temporary_.c_str());
  temporary_.clear();
  throw Error("cannot write '" + path_.string() + "': " + why);
}

void AtomicFileWriter::write(std::string_view piece) {
  if (fd_ < 0) fail("the file was already written or has failed");
  while (!piece.empty()) {
    const ssize_t n = ::write(fd_, piece.data(), piece.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail(std::strerror(n < 0 ? errno : EIO));
    piece.remove_prefix(static_cast<std::size_t>(n));
  }
}

void AtomicFileWriter::commit() {
  if (fd_ < 0) fail("the file was already written or has failed");
  // mkstemp makes the file 0600: a new file is 0644 (results are for everyone on the machine to read),
  // a replaced one keeps its mode.
  if (::fchmod(fd_, mode_) != 0 || ::fsync(fd_) != 0) fail(std::strerror(errno));
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0 || ::rename(temporary_.c_str(), target_.c_str()) != 0) fail(std::strerror(errno));
  temporary_.clear();
}

void checkDistinctOutputs(std::initializer_list<NamedOutput> outputs) {
  std::vector<std::pair<const NamedOutput*, FileIdentity>> given;
  for (const NamedOutput& o : outputs) {
    if (o.path.empty()) continue;
    FileIdentity id = identityOf(o.path);
    for (const auto& [earlier, seen] : given)
      if (sameFile(seen, id))
        throw InvalidArgument(std::string(earlier->flag) + " '" + earlier->path.string() + "' and " + std::string(o.flag) + " '" +
                              o.path.string() + "' name the same file; give each output its own path");
    given.emplace_back(&o, std::move(id));
  }
}

}  // namespace cclab::conventions
