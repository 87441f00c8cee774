// Topology files (JSON): parse with a clear error naming the bad field, and write back (calibration
// saves a calibrated topology this way). Schema: docs/sim.md.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "sim/topology.h"

namespace cclab::sim {

TopologySpec parseTopology(const nlohmann::json& j);
// Reads and parses a file; errors name the file and the field.
TopologySpec loadTopologyFile(const std::string& path);
nlohmann::json toJson(const TopologySpec& spec);
void saveTopologyFile(const TopologySpec& spec, const std::string& path);

// A preset name (see presets.h) or a path to a topology file.
TopologySpec resolveTopology(const std::string& presetOrPath);

}  // namespace cclab::sim
