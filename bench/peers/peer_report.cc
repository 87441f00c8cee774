#include "bench/peers/peer_report.h"

#include "bench/report/machine_info.h"

namespace cclab::bench {

void printPeerHeader(const TablePrinter& table, const PeerIdentity& id, const PeerOptions& o, int nranks) {
  const IterationOptions& it = o.iteration;
  const MachineInfo m = currentMachine();
  const std::string step = o.sweep.stepFactor > 1 ? std::to_string(o.sweep.stepFactor) + "(factor)"
                                                  : std::to_string(o.sweep.stepBytes) + "(bytes)";
  table.headerLine(std::string(id.tool) + ": cclab peer, nccl-tests format");
  table.headerLine("nThread 1 nGpus " + std::to_string(nranks) + " minBytes " + std::to_string(o.sweep.minBytes) +
                   " maxBytes " + std::to_string(o.sweep.maxBytes) + " step: " + step + " warmup iters: " +
                   std::to_string(it.warmup) + " iters: " + std::to_string(it.iters) + " agg iters: " +
                   std::to_string(it.aggIters) + " validation: " + std::to_string(it.check) + " graph: 0");
  table.headerLine("");
  table.headerLine("Backend: " + id.backend + " (" + id.description + ")");
  table.headerLine("Algorithm: " + id.algo + "  time: per-rank timers combined as -a " + std::string(name(it.average)));
  table.headerLine("Machine: " + m.hostname + ", " + m.cpuModel + ", " + std::to_string(m.cpus) + " cpus  date: " +
                   currentDateUtc());
  table.headerLine("");
}

Measurement peerMeasurement(const CollectiveShape& shape, int nranks, double seconds,
                            std::optional<std::int64_t> wrong) {
  const conventions::Bandwidth bw = conventions::bandwidthOf(plan::Collective::AllReduce, nranks, shape.sizeBytes, seconds);
  return {seconds * 1e6, bw.algBw, bw.busBw, wrong};
}

ResultRow peerRow(const CollectiveShape& shape, DataType type, Measurement outOfPlace, Measurement inPlace) {
  return {shape.sizeBytes, shape.count, std::string(name(type)), "sum", -1, outOfPlace, inPlace};
}

RunInfo peerRunInfo(const PeerIdentity& id, const PeerOptions& o, int nranks, const std::string& command) {
  RunInfo info;
  info.collective = "allreduce";
  info.backend = id.backend;
  info.algo = id.algo;
  info.nranks = nranks;
  info.type = std::string(name(o.type));
  info.op = "sum";
  info.machine = currentMachine();
  info.date = currentDateUtc();
  info.command = command;
  const IterationOptions& it = o.iteration;
  info.settings = {{"description", id.description}, {"iters", it.iters},       {"warmup_iters", it.warmup},
                   {"agg_iters", it.aggIters},       {"check", it.check},       {"iter_bytes", it.iterBytes},
                   {"average", std::string(name(it.average))}};
  return info;
}

}  // namespace cclab::bench
