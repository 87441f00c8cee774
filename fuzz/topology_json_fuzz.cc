// libFuzzer target: the topology file reader (sim/topology_json.h, loadTopologyFile) and what cclab-sim
// does next with a file, building its Topology (sim/topology.h). Any bytes must either load or throw; a
// loaded topology must write back (toJson), load again unchanged in shape, and build (or be refused)
// within the fuzzer's time and memory limits: a runaway must be refused by the reader.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>

#include "fuzz/fuzz_input_file.h"
#include "sim/topology.h"
#include "sim/topology_json.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto spec = cclab::fuzz::readInputFile("topology", data, size, cclab::sim::loadTopologyFile);
  if (!spec) return 0;
  // What the reader accepted, the writer must be able to write and the reader to read back.
  cclab::sim::TopologySpec again;
  try {
    again = cclab::sim::parseTopology(cclab::sim::toJson(*spec));
  } catch (const std::exception&) {
    std::abort();
  }
  if (again.kind != spec->kind || again.ranks != spec->ranks || again.classes.size() != spec->classes.size()) std::abort();
  try {
    const cclab::sim::Topology topology(*spec);
    if (topology.nranks() != spec->ranks) std::abort();
  } catch (const std::exception&) {
    // refused with a message: the contract
  }
  return 0;
}
