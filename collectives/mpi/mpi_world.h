// The MPI bootstrap of the process backend: which rank this process is, how many there
// are, where each one runs (pid, host, node), and an agreed job id for shared segments.
//
// Nodes: ranks that share memory (MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)) form a node, numbered in
// the order of their lowest rank. `ranksPerNode` > 0 emulates nodes instead: consecutive groups of
// that many ranks count as separate nodes (so the inter-node path runs on one machine); it must
// divide the number of ranks. MPI errors return codes (MPI_ERRORS_RETURN) and become cclab::Error.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

namespace cclab::mpi {

// True when this process was started by an MPI launcher (mpirun/mpiexec/srun with PMI/PMIx).
bool launchedByMpi();

// Initializes MPI (thread level SERIALIZED, errors returned) unless it is already; finalized at exit.
// Tools call it first under mpirun, before anything can exit: a process that leaves before MPI_Init
// leaves the others blocked in theirs.
void initialize();

struct Peer {
  int pid = 0;
  std::string host;
  int node = 0;
};

class World {
 public:
  // Initializes MPI on first use in the process (finalized at exit); `ranksPerNode` as above.
  explicit World(int ranksPerNode = 0);
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  [[nodiscard]] int rank() const { return rank_; }
  [[nodiscard]] int size() const { return size_; }
  [[nodiscard]] MPI_Comm comm() const { return MPI_COMM_WORLD; }
  [[nodiscard]] const std::vector<Peer>& peers() const { return peers_; }
  [[nodiscard]] int node(int rank) const { return peers_[static_cast<std::size_t>(rank)].node; }
  [[nodiscard]] int nodes() const { return nodes_; }
  // Ranks per node when every node has the same consecutive block of ranks (what plans need), else 0.
  [[nodiscard]] int ranksPerNode() const { return ranksPerNode_; }
  [[nodiscard]] bool emulatedNodes() const { return emulated_; }
  [[nodiscard]] const std::string& jobId() const { return jobId_; }

  // Collective helpers over all ranks (every rank must call them in the same order).
  [[nodiscard]] double maxOf(double v) const;
  [[nodiscard]] long long sumOf(long long v) const;
  void barrier() const;
  // Ends every rank of the job (MPI_Abort): for errors after which the others could wait forever.
  [[noreturn]] void abort(int code) const;

 private:
  int rank_ = 0;
  int size_ = 1;
  int nodes_ = 1;
  int ranksPerNode_ = 0;
  bool emulated_ = false;
  std::vector<Peer> peers_;
  std::string jobId_;
};

// Throws cclab::Error "mpi: <what> failed: <MPI's error string>" unless rc is MPI_SUCCESS.
void check(int rc, const char* what);
// A message's byte count as MPI's int count; throws InvalidArgument for a slice of more than INT_MAX bytes.
int messageBytes(std::size_t bytes);

}  // namespace cclab::mpi
