// Reading a JSON input file (a topology, a measured *_perf -J file) with the refusals every input
// needs: a missing file, a directory, a file too large to be one, text that is not JSON, and numbers
// JSON can write but a double cannot hold (1e400) each give one line naming the file.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace cclab::sim {

// Largest input file read: 64 MiB. The largest real one, a measured sweep of every size from 1 B to
// 16 GiB with all fields, is under 100 KiB; anything near this bound is not an input of ours.
inline constexpr std::uintmax_t kMaxInputFileBytes = std::uintmax_t{64} << 20;

// Throws InvalidArgument "<what> file 'PATH': <reason>".
nlohmann::json readJsonFile(const std::string& path, const std::string& what);

}  // namespace cclab::sim
