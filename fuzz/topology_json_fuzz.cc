// libFuzzer target: the topology file reader (sim/topology_json.h, loadTopologyFile). Any bytes must
// either load or throw; a loaded topology must write back (toJson) and load again unchanged in shape.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>

#include "fuzz/fuzz_input_file.h"
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
  return 0;
}
