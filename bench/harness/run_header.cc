#include "bench/harness/run_header.h"

#include <unistd.h>

#include <array>
#include <vector>
#include <cstdio>

#include "bench/report/value_parse.h"

namespace cclab::bench {
namespace {

std::string stepText(const SweepOptions& s) {
  return s.stepFactor > 1 ? std::to_string(s.stepFactor) + "(factor)" : std::to_string(s.stepBytes) + "(bytes)";
}

std::string stragglerText(const Straggler& s) {
  if (s.rank < 0) return "none";
  return format(s);
}

}  // namespace

void printRunHeader(const TablePrinter& table, const char* tool, plan::Collective c, const HarnessOptions& o,
                    const Communicator& comm, const MachineInfo& machine, const std::string& date) {
  const plan::Algorithm runs = plan::generatedAlgorithm(c, o.comm.algorithm);
  std::string algorithm(plan::name(runs));
  if (runs != o.comm.algorithm) algorithm += " (requested " + std::string(plan::name(o.comm.algorithm)) + ")";
  const IterationOptions& it = o.iteration;
  table.headerLine(std::string(tool) + ": cclab, nccl-tests format");
  table.headerLine("nThread " + std::to_string(o.threads) + " nGpus " + std::to_string(comm.nranks() / o.threads) + " minBytes " + std::to_string(o.sweep.minBytes) +
                   " maxBytes " + std::to_string(o.sweep.maxBytes) + " step: " + stepText(o.sweep) +
                   " warmup iters: " + std::to_string(it.warmup) + " iters: " + std::to_string(it.iters) +
                   " agg iters: " + std::to_string(it.aggIters) + " validation: " + std::to_string(it.check) +
                   " graph: 0");
  if (it.iterBytes > 0)
    table.headerLine("iterations capped at " + conventions::formatBytes(it.iterBytes) + " per size (--iter-bytes), at least " +
                     std::to_string(kMinScaledIters));
  table.headerLine("");
  table.headerLine("Backend: " + std::string(name(comm.backend())) + " (" + comm.description() + ")");
  table.headerLine("Algorithm: " + algorithm + "  slice: " +
                   (o.comm.sliceBytes ? conventions::formatBytes(o.comm.sliceBytes) : std::string("backend default")) +
                   "  channels: " + (o.comm.channels ? std::to_string(o.comm.channels) : std::string("backend default")) +
                   "  ranksPerNode: " + std::to_string(o.comm.ranksPerNode.value_or(0)) +
                   "  timeout: " + std::to_string(o.comm.timeout.count()) + " ms  straggler: " +
                   stragglerText(o.comm.straggler) +
                   (o.threads > 1 ? "  time: each rank's thread times its own calls, combined by -a " + std::string(name(it.average))
                                  : "  time: one thread times the group call (-a " + std::string(name(it.average)) + ")"));
  table.headerLine("Machine: " + machine.hostname + ", " + machine.cpuModel + ", " + std::to_string(machine.cpus) +
                   " cpus  date: " + date);
  table.headerLine("");
  table.headerLine("Using devices");
  const std::vector<std::string> where = comm.rankLocations();  // the proc backend: every process's pid and host
  for (int r = 0; r < comm.nranks(); ++r) {
    std::array<char, 200> line{};
    if (!where.empty())
      std::snprintf(line.data(), line.size(), " Rank %2d Group  0 %s %s rank %d", r, where[static_cast<std::size_t>(r)].c_str(),
                    std::string(name(comm.backend())).c_str(), r);
    else
      std::snprintf(line.data(), line.size(), " Rank %2d Group  0 Pid %6d on %10s %s rank %d", r, static_cast<int>(getpid()),
                    machine.hostname.c_str(), std::string(name(comm.backend())).c_str(), r);
    table.headerLine(line.data());
  }
  table.headerLine("");
}

}  // namespace cclab::bench
