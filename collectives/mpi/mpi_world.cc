#include "collectives/mpi/mpi_world.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "collectives/core/errors.h"
#include "collectives/proc/shm_segment.h"

namespace cclab::mpi {
namespace {

void finalizeAtExit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

}  // namespace

void initialize() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) return;
  int provided = 0;
  // SERIALIZED, not FUNNELED: the trainer calls collectives from a worker's communication thread and
  // its epoch-end thread, one at a time (never two threads in MPI at once), not only from main().
  check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided), "MPI_Init_thread");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  std::atexit(finalizeAtExit);
}

bool launchedByMpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"})
    if (std::getenv(v)) return true;
  return false;
}

void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  std::array<char, MPI_MAX_ERROR_STRING> text{};
  int len = 0;
  MPI_Error_string(rc, text.data(), &len);
  throw Error(std::string("mpi: ") + what + " failed: " + std::string(text.data(), static_cast<std::size_t>(len)));
}

int messageBytes(std::size_t bytes) {
  if (bytes > static_cast<std::size_t>(INT_MAX))
    throw InvalidArgument("proc: a slice of " + std::to_string(bytes) + " bytes is more than one MPI message carries");
  return static_cast<int>(bytes);
}

World::World(int ranksPerNode) {
  initialize();
  check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
  check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
  if (ranksPerNode < 0 || (ranksPerNode > 0 && size_ % ranksPerNode != 0))
    throw InvalidArgument("mpi: ranks per node " + std::to_string(ranksPerNode) + " does not divide the " +
                          std::to_string(size_) + " ranks");

  // Who and where: pid and host of every rank, and the lowest rank sharing memory with it.
  MPI_Comm local = MPI_COMM_NULL;
  check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local),
        "MPI_Comm_split_type");
  int leader = rank_;
  check(MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, local), "MPI_Allreduce (node leader)");
  MPI_Comm_free(&local);
  struct Info {
    int pid;
    int leader;
    char host[MPI_MAX_PROCESSOR_NAME];
  };
  Info mine{};
  mine.pid = static_cast<int>(getpid());
  mine.leader = leader;
  int len = 0;
  MPI_Get_processor_name(mine.host, &len);
  std::vector<Info> all(static_cast<std::size_t>(size_));
  check(MPI_Allgather(&mine, sizeof(Info), MPI_BYTE, all.data(), sizeof(Info), MPI_BYTE, MPI_COMM_WORLD),
        "MPI_Allgather (peers)");
  std::vector<int> leaders;
  peers_.resize(static_cast<std::size_t>(size_));
  for (int r = 0; r < size_; ++r) {
    const Info& i = all[static_cast<std::size_t>(r)];
    Peer& p = peers_[static_cast<std::size_t>(r)];
    p.pid = i.pid;
    p.host = std::string(i.host, strnlen(i.host, sizeof(i.host)));
    if (ranksPerNode > 0) {
      p.node = r / ranksPerNode;
      continue;
    }
    auto it = std::find(leaders.begin(), leaders.end(), i.leader);
    p.node = static_cast<int>(it - leaders.begin());
    if (it == leaders.end()) leaders.push_back(i.leader);
  }
  emulated_ = ranksPerNode > 0;
  nodes_ = emulated_ ? size_ / ranksPerNode : static_cast<int>(leaders.size());
  // A uniform layout (node n holds ranks n·g .. n·g+g-1) is what the plans' ranksPerNode means.
  const int g = size_ / nodes_;
  bool uniform = size_ % nodes_ == 0;
  for (int r = 0; uniform && r < size_; ++r) uniform = peers_[static_cast<std::size_t>(r)].node == r / g;
  ranksPerNode_ = uniform && nodes_ > 1 ? g : 0;

  // One job id for the shared segments, rank 0's.
  std::array<char, 64> id{};
  if (rank_ == 0) {
    const std::string made = proc::makeJobId();
    std::memcpy(id.data(), made.data(), std::min(made.size(), id.size() - 1));
  }
  check(MPI_Bcast(id.data(), static_cast<int>(id.size()), MPI_CHAR, 0, MPI_COMM_WORLD), "MPI_Bcast (job id)");
  jobId_ = id.data();
}

double World::maxOf(double v) const {
  check(MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce (max)");
  return v;
}

long long World::sumOf(long long v) const {
  check(MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce (sum)");
  return v;
}

void World::barrier() const { check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier"); }

void World::abort(int code) const {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);  // MPI_Abort does not return; in case it does
}

}  // namespace cclab::mpi
