// Output in nccl-tests' all_reduce_perf format (a table on stdout, marked as predicted) and in the
// JSON shape bench/*_perf -J writes, with "predicted": true, so the same plots read both. Sizes, the
// sweep, busbw, the table and the JSON schema are collectives/conventions', shared with bench.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "collectives/core/errors.h"
#include "collectives/plan/plan.h"
#include "sim/protocol.h"
#include "sim/units.h"

namespace cclab::sim {

struct PredictedRow {
  Bytes size = 0;           // nccl-tests' size column
  std::int64_t count = 0;   // size / type size
  Micros time = 0;
  GBps algbw = 0, busbw = 0;
  Protocol protocol = Protocol::None;  // the protocol the call took (protocol.h)
};

struct PredictedRun {
  plan::Collective collective = plan::Collective::AllReduce;
  std::string algo;       // ring, tree, dbtree, rhd, chain, hier-ring, hier-tree
  int nranks = 0;
  std::string type = "float";
  std::string redop = "sum";
  int root = -1;          // -1 where the collective has none (nccl-tests prints -1)
  std::string topology;
  std::string model;      // replay or analytic
  std::int64_t sliceBytes = 0;  // 0 auto
  ProtocolChoice protocol = ProtocolChoice::Auto;  // as asked (--protocol); each row says what it took
  std::vector<PredictedRow> rows;
};

// A row from a time, with nccl-tests' algbw = size/time and busbw = algbw·factor.
PredictedRow makeRow(plan::Collective c, int nranks, Bytes size, std::int64_t elemSize, Micros time);

// The table; where the rows took protocols (not None), a last line says which, by size range
// ("# protocol per call: ll 8B..256K, simple 512K..128M").
std::string formatTable(const PredictedRun& run);
// nccl-tests' JSON plus cclab-sim's keys; "protocol" (asked) and, in each result, "protocol" (taken).
nlohmann::json toJson(const PredictedRun& run);

// "1.5K"-style sizes for humans.
std::string humanBytes(Bytes b);
// A size flag's value: conventions::parseSize (K/M/G/T, KiB..TiB; 1K = 1024), InvalidArgument naming
// `flag` and the text.
Bytes parseBytes(const std::string& s, std::string_view flag = "size");

// The sizes of -b/-e/-f/-i (texts as given; conventions/sweep.h's rule and limit). cclab-sim's default
// factor is 2; an increment other than 0 replaces the factor.
std::vector<Bytes> sizeSweep(const std::string& minBytes, const std::string& maxBytes, const std::string& factor,
                             const std::string& increment);

}  // namespace cclab::sim
