// libFuzzer target: the NCCL topology dump reader (sim/nccl_topology.h, loadNcclSystem) and what
// cclab-sim does next with a dump: the topology of one node and of two copies of it, and building it
// (sim/topology.h). Any bytes must either load or throw; a topology made from a loaded dump must pass
// checkSpec (ncclTopology calls it) and build, or be refused with a message.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>

#include "fuzz/fuzz_input_file.h"
#include "sim/nccl_topology.h"
#include "sim/topology.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto system = cclab::fuzz::readInputFile("nccl-topology", data, size, cclab::sim::loadNcclSystem);
  if (!system) return 0;
  if (system->gpus.empty()) std::abort();  // the reader refuses a dump without GPUs
  for (const int nodes : {1, 2}) {
    try {
      const std::vector<cclab::sim::NcclSystem> copies(static_cast<std::size_t>(nodes), *system);
      const cclab::sim::TopologySpec spec = cclab::sim::ncclTopology(copies);
      const cclab::sim::Topology topology(spec);
      if (topology.nranks() != nodes * static_cast<int>(system->gpus.size())) std::abort();
    } catch (const std::exception&) {
      // refused with a message: the contract
    }
  }
  return 0;
}
