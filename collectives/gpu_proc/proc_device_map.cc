#include "collectives/gpu_proc/proc_device_map.h"

#include <string>

#include "collectives/core/errors.h"

namespace cclab::cuda {

ProcDeviceMap::ProcDeviceMap(std::vector<ProcessPlacement> processes, int ranksPerProcess)
    : procs_(std::move(processes)), k_(ranksPerProcess) {
  if (procs_.empty()) throw InvalidArgument("cuda: a multi-process job needs at least one process");
  if (k_ < 1) throw InvalidArgument("cuda: ranks per process must be >= 1, got " + std::to_string(k_));
  std::vector<int> nextLocal;  // per node, the local index its next process must have
  for (std::size_t p = 0; p < procs_.size(); ++p) {
    const ProcessPlacement& pl = procs_[p];
    const std::string who = "cuda: process " + std::to_string(p);
    if (pl.visibleDevices < 1) throw InvalidArgument(who + " sees no CUDA device");
    if (pl.node < 0 || pl.node > nodes_)
      throw InvalidArgument(who + " is on node " + std::to_string(pl.node) + "; nodes are numbered in the order of their first process (next new node: " +
                            std::to_string(nodes_) + ")");
    if (pl.node == nodes_) {
      ++nodes_;
      nextLocal.push_back(0);
    }
    int& want = nextLocal[static_cast<std::size_t>(pl.node)];
    if (pl.localIndex != want)
      throw InvalidArgument(who + " has local index " + std::to_string(pl.localIndex) + " on node " + std::to_string(pl.node) +
                            ", expected " + std::to_string(want));
    ++want;
  }
}

void ProcDeviceMap::checkRank(int rank) const {
  if (rank < 0 || rank >= nranks())
    throw InvalidArgument("cuda: rank " + std::to_string(rank) + " is not a rank of " + std::to_string(nranks()));
}

int ProcDeviceMap::processOf(int rank) const {
  checkRank(rank);
  return rank / k_;
}

int ProcDeviceMap::deviceOfProcess(int process) const {
  if (process < 0 || process >= processes())
    throw InvalidArgument("cuda: process " + std::to_string(process) + " is not one of " + std::to_string(processes()));
  const ProcessPlacement& pl = procs_[static_cast<std::size_t>(process)];
  return pl.localIndex % pl.visibleDevices;
}

int ProcDeviceMap::deviceOf(int rank) const { return deviceOfProcess(processOf(rank)); }

std::vector<int> ProcDeviceMap::ranksOf(int process) const {
  (void)deviceOfProcess(process);  // range check
  std::vector<int> out;
  for (int k = 0; k < k_; ++k) out.push_back(process * k_ + k);
  return out;
}

std::vector<int> ProcDeviceMap::ranksOnNode(int node) const {
  std::vector<int> out;
  for (int r = 0; r < nranks(); ++r)
    if (nodeOf(r) == node) out.push_back(r);
  return out;
}

std::vector<int> ProcDeviceMap::nodeOfEveryRank() const {
  std::vector<int> out;
  for (int r = 0; r < nranks(); ++r) out.push_back(nodeOf(r));
  return out;
}

int ProcDeviceMap::uniformRanksPerNode() const {
  if (nodes_ < 2 || nranks() % nodes_ != 0) return 0;
  const int g = nranks() / nodes_;
  for (int r = 0; r < nranks(); ++r)
    if (nodeOf(r) != r / g) return 0;
  return g;
}

}  // namespace cclab::cuda
