#include "bench/peers/peer_options.h"

#include "bench/report/common_flags.h"
#include "bench/report/usage_error.h"

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

}  // namespace cclab::bench
