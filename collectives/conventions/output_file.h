// Output files every tool writes (-J JSON, --trace, -o, --save-weights): checked before the work
// starts, written whole. A run that fails half-way (bad usage, timeout, Ctrl-C, a full disk) leaves the
// previous file as it was, never a truncated one: the content goes to a temporary file beside the
// target, every write and the close are checked, and only then is it renamed over the target.
//
// Targets: a new path, or an existing regular file, which is replaced. A symlink is written through:
// the file it resolves to is replaced and the link stays (a dangling link is refused). Anything else
// that exists (a directory, a device such as /dev/null or /dev/full, a FIFO, a socket) is refused with
// one line and left untouched: renaming over it would replace the node itself.
//
// A replaced file keeps its permission bits (a 0640 result stays 0640); a new file is 0644, readable by
// everyone on the machine, whatever the umask (as every tool wrote it before). A file-size limit
// (`ulimit -f`) is a failed write like a full disk, not a kill by SIGXFSZ (ignoreFileSizeSignal below):
// write() fails with EFBIG, the temporary file is removed and the tool exits 1 with one line.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <initializer_list>
#include <string>
#include <string_view>

namespace cclab::conventions {

// Throws InvalidArgument ("<what> 'PATH': is a directory" / "...: is a FIFO, not a regular file" /
// "...: cannot create a file in DIR: <reason>") unless a file can be written at `path` as above.
// Creates nothing that outlives the call. Call it before the work.
void checkWritable(const std::filesystem::path& path, std::string_view what);

// Writes `content` to a temporary file in the target's directory, flushes it, and renames it over `path`
// (over the file a symlink resolves to). Throws Error naming the path and the reason (a target that is
// not a regular file, a failed write such as ENOSPC); the old file (if any) is then untouched.
void writeFileAtomically(const std::filesystem::path& path, std::string_view content);

// The same, streamed, for content too large to build in memory first (a replay's trace): write() the
// pieces, then commit() renames the whole onto the target. Destroyed without commit() (an exception
// on the way), it removes its temporary file and the target stays as it was.
class AtomicFileWriter {
 public:
  explicit AtomicFileWriter(const std::filesystem::path& path);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;
  void write(std::string_view piece);  // throws Error naming the path (ENOSPC, EFBIG)
  void commit();                       // throws Error naming the path; write() after it is an error

 private:
  [[noreturn]] void fail(const std::string& why);
  std::filesystem::path path_, target_;
  std::string temporary_;
  int fd_ = -1;
  mode_t mode_ = 0644;
};

// Makes a file-size limit (`ulimit -f`) an error instead of a kill: SIGXFSZ is ignored process-wide
// when its disposition is the default (a handler the program set is kept), so a write or ftruncate
// past the limit fails with EFBIG. The writer calls it; tools call it first thing in main, so the
// other files they make (the process backend's shared segments) fail the same way and every exit
// path (one line, segments removed) runs.
void ignoreFileSizeSignal() noexcept;

// One output of a tool: its flag ("-J") and its path ("" when not given: skipped).
struct NamedOutput {
  std::string_view flag;
  std::filesystem::path path;
};
// Throws InvalidArgument ("-J 'a.json' and --trace './a.json' name the same file; give each output
// its own path") when two outputs name one file: the same path, or the same file through a symlink, a hard
// link or another spelling ("./x", "d/../x"). Two outputs written to one file would silently keep only
// the later one. Call it before the work, with every output of the command.
void checkDistinctOutputs(std::initializer_list<NamedOutput> outputs);

}  // namespace cclab::conventions
