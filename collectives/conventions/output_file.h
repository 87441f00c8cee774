// Output files every tool writes (-J JSON, --trace, CSV): checked before the work starts, written whole.
// A run that fails half-way (bad usage, timeout, Ctrl-C) leaves the previous file as it was, never a
// truncated one: the content goes to a temporary file beside the target and is renamed over it.
#pragma once

#include <filesystem>
#include <string_view>

namespace cclab::conventions {

// Throws InvalidArgument ("<what> 'PATH': is a directory" / "...: cannot create a file in DIR: <reason>")
// unless a file can be created at `path`. Creates nothing that outlives the call. Call it before the work.
void checkWritable(const std::filesystem::path& path, std::string_view what);

// Writes `content` to a temporary file in the target's directory, flushes it, and renames it over `path`.
// Throws Error naming the path and the reason; the old file (if any) is then untouched.
void writeFileAtomically(const std::filesystem::path& path, std::string_view content);

}  // namespace cclab::conventions
