// Reading a JSON input file (a topology, a measured *_perf -J file) with the refusals every input
// needs: what the one opener refuses (collectives/core/input_file.h: a missing file, a directory, a
// FIFO or device, a file too large to be one), text that is not JSON, a key twice in one object, and
// numbers JSON can write but a double cannot hold (1e400), each in one line naming the file.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace cclab::sim {

// Throws InvalidArgument "<what> file 'PATH': <reason>".
nlohmann::json readJsonFile(const std::string& path, const std::string& what);

}  // namespace cclab::sim
