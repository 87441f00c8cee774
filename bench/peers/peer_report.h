// What both peers print: the '#' header, rows built from measured seconds, and the JSON RunInfo,
// all through bench/report (the same table and schema as all_reduce_perf).
#pragma once

#include <optional>
#include <string>

#include "bench/peers/peer_options.h"
#include "bench/report/collective_shape.h"
#include "bench/report/json_report.h"
#include "bench/report/report_types.h"

namespace cclab::bench {

struct PeerIdentity {
  const char* tool;         // "mpi_allreduce_perf"
  std::string backend;      // "mpi", "gloo": the JSON "backend"
  std::string algo;         // the JSON "algo": "MPI_Allreduce", "ring"
  std::string description;  // one line: library, version, transport
};

void printPeerHeader(const TablePrinter& table, const PeerIdentity& id, const PeerOptions& o, int nranks);
Measurement peerMeasurement(const CollectiveShape& shape, int nranks, double seconds,
                            std::optional<std::int64_t> wrong);
ResultRow peerRow(const CollectiveShape& shape, DataType type, Measurement outOfPlace, Measurement inPlace);
RunInfo peerRunInfo(const PeerIdentity& id, const PeerOptions& o, int nranks, const std::string& command);

}  // namespace cclab::bench
