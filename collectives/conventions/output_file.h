// Output files every tool writes (-J JSON, --trace, -o, --save-weights): checked before the work
// starts, written whole. A run that fails half-way (bad usage, timeout, Ctrl-C, a full disk) leaves the
// previous file as it was, never a truncated one: the content goes to a temporary file beside the
// target, every write and the close are checked, and only then is it renamed over the target.
//
// Targets: a new path, or an existing regular file, which is replaced. A symlink is written through:
// the file it resolves to is replaced and the link stays (a dangling link is refused). Anything else
// that exists (a directory, a device such as /dev/null or /dev/full, a FIFO, a socket) is refused with
// one line and left untouched: renaming over it would replace the node itself.
#pragma once

#include <filesystem>
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

}  // namespace cclab::conventions
