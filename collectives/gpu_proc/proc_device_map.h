// Rank -> (process, node, device) for the CUDA backend under mpirun ("GPUs in processes").
//
// P processes, each driving K consecutive ranks (global rank = process * K + k), each process on one
// GPU: the device of a process is its position among the processes of its node modulo the devices it
// sees (`localIndex % visibleDevices`). So 8 processes on an 8-GPU node take one GPU each; with
// CUDA_VISIBLE_DEVICES narrowed to one device per process every process uses its device 0; and P
// processes on a machine with one GPU share it (one process per virtual rank, what scripts/gpu_check
// runs). Which ranks really share a GPU across processes is known only from the devices' identities,
// exchanged with the IPC records (ipc_exchange.h: NodeDirectory::ranksSharingDevice).
// Pure host logic (no CUDA, no MPI), unit-tested on the CPU.
#pragma once

#include <vector>

namespace cclab::cuda {

// Where one process runs, as the bootstrap finds it.
struct ProcessPlacement {
  int node = 0;            // nodes numbered 0..N-1 in the order of their lowest process
  int localIndex = 0;      // position among the processes of its node, 0..n-1 in process order
  int visibleDevices = 1;  // CUDA devices this process sees (cudaGetDeviceCount)
};

class ProcDeviceMap {
 public:
  // processes[p] for p = 0..P-1. Throws InvalidArgument when there is no process, ranksPerProcess < 1,
  // a process sees no device, the nodes are not numbered in order of their first process, or the
  // local indices of a node are not 0, 1, ... in process order.
  ProcDeviceMap(std::vector<ProcessPlacement> processes, int ranksPerProcess);

  [[nodiscard]] int processes() const { return static_cast<int>(procs_.size()); }
  [[nodiscard]] int ranksPerProcess() const { return k_; }
  [[nodiscard]] int nranks() const { return processes() * k_; }
  [[nodiscard]] int nodes() const { return nodes_; }

  [[nodiscard]] int processOf(int rank) const;
  [[nodiscard]] int nodeOf(int rank) const { return procs_[static_cast<std::size_t>(processOf(rank))].node; }
  // The device ordinal, as the rank's process numbers its visible devices.
  [[nodiscard]] int deviceOf(int rank) const;
  [[nodiscard]] int deviceOfProcess(int process) const;
  [[nodiscard]] std::vector<int> ranksOf(int process) const;  // K ranks, ascending
  [[nodiscard]] std::vector<int> ranksOnNode(int node) const;
  [[nodiscard]] std::vector<int> nodeOfEveryRank() const;
  [[nodiscard]] bool sameProcess(int a, int b) const { return processOf(a) == processOf(b); }
  [[nodiscard]] bool sameNode(int a, int b) const { return nodeOf(a) == nodeOf(b); }
  // Ranks per node when every node holds the same consecutive block of ranks (a plan's ranksPerNode,
  // plan.h), else 0; also 0 with a single node.
  [[nodiscard]] int uniformRanksPerNode() const;

 private:
  void checkRank(int rank) const;
  std::vector<ProcessPlacement> procs_;
  int k_;
  int nodes_ = 0;
};

}  // namespace cclab::cuda
