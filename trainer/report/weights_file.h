// --save-weights: the final parameters (sync: rank 0's replica; async: the server's copy) as raw
// float32 in this machine's byte order, no header (the count is the file size / 4; the layout is the
// MLP's, model/layout.h). Meant for comparing runs, e.g. the thread and process backends.
#pragma once

#include <filesystem>
#include <span>
#include <vector>

namespace cclab::trainer {

// Written whole (temporary file + rename); throws Error.
void writeWeights(const std::filesystem::path& path, std::span<const float> params);
// Throws Error when the file cannot be read or its size is not a multiple of 4.
std::vector<float> readWeights(const std::filesystem::path& path);

}  // namespace cclab::trainer
