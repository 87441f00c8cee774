// The peers' flags (peer_options.h) and their memory check.
#include "bench/peers/peer_options.h"

#include <optional>

#include "bench/report/common_flags.h"
#include "bench/report/usage_error.h"
#include "collectives/conventions/memory_budget.h"
#include "collectives/core/errors.h"

namespace cclab::bench {

bool peerSupports(DataType t) { return t == DataType::Float32 || t == DataType::Float64 || t == DataType::Int32; }

void addPeerFlags(CommandLine& cli, PeerOptions& o, bool ranksFlag) {
  addSweepFlags(cli, o.sweep);
  addIterationFlags(cli, o.iteration);
  if (ranksFlag) addRanksFlag(cli, o.nranks);
  cli.addOption('d', "datatype", "TYPE", "float, double or int32 (default float)", [&o](std::string_view v) {
    const DataType t = parseDataType(v);
    if (!peerSupports(t)) throw UsageError("this peer runs float, double or int32, not '" + std::string(v) + "'");
    o.type = t;
  });
  cli.addOption('o', "op", "sum", "the reduction (only sum)", [](std::string_view v) {
    if (v != "sum") throw UsageError("this peer runs sum only, not '" + std::string(v) + "'");
  });
  addJsonFlag(cli, o.jsonPath);
  cli.addSwitch('h', "help", "print this help", [&o] { o.help = true; });
}

void requirePeerMemory(const PeerOptions& o, int ranksHere) {
  const std::optional<std::int64_t> available = conventions::hostMemoryAvailable();
  if (!available) return;
  const int buffers = o.iteration.check ? 3 : 2;  // PeerRankBuffers: send, recv, expected
  const std::int64_t needed = conventions::saturatingBytes(ranksHere, conventions::saturatingBytes(buffers, o.sweep.maxBytes));
  try {
    conventions::requireMemory(needed, *available,
                               "-e " + std::to_string(o.sweep.maxBytes) + " on " + std::to_string(ranksHere) + " ranks",
                               "host memory (MemAvailable)");
  } catch (const InvalidArgument& e) {
    throw UsageError(e.what());
  }
}

}  // namespace cclab::bench
