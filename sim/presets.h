// Built-in topologies. The same specs are written to sim/topologies/*.json (`cclab-sim topo NAME`),
// and a test checks the files match, so a file is the documented, editable form of each preset.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/topology.h"

namespace cclab::sim {

std::vector<std::string> presetNames();  // dgx-h100, dgx-h200, dgx-a100, pcie, cluster, cluster-4nic, cluster-a100, host
std::optional<TopologySpec> findPreset(const std::string& name);

}  // namespace cclab::sim
