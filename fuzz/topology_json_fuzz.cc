// libFuzzer target: the topology file reader (sim/topology_json.h, loadTopologyFile). Any bytes must
// either load or throw; a loaded topology must write back (toJson) and load again unchanged in shape.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>

#include "fuzz/fuzz_input_file.h"
#include "sim/topology_json.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = cclab::fuzz::writeInputFile("topology", data, size);
  cclab::sim::TopologySpec spec;
  try {
    spec = cclab::sim::loadTopologyFile(path);
  } catch (const std::exception&) {
    return 0;  // refused with a message: the contract
  }
  // What the reader accepted, the writer must be able to write and the reader to read back.
  cclab::sim::TopologySpec again;
  try {
    again = cclab::sim::parseTopology(cclab::sim::toJson(spec));
  } catch (const std::exception&) {
    std::abort();
  }
  if (again.kind != spec.kind || again.ranks != spec.ranks || again.classes.size() != spec.classes.size()) std::abort();
  return 0;
}
