// mpi_allreduce_perf: OpenMPI's MPI_Allreduce measured the way all_reduce_perf measures cclab, with
// the same flags (bench/peers/peer_options.h), table, JSON and exact check. One process per rank:
//   MALLOC_MMAP_MAX_=0 mpirun -np 4 --oversubscribe mpi_allreduce_perf -b 8 -e 256M -f 4
// (as root add --allow-run-as-root). Out of place: MPI_Allreduce(send, recv); in place: MPI_IN_PLACE.
// Each rank times its own loop between barriers; -a combines the per-rank times (default: mean).
#include <mpi.h>

#include <chrono>
#include <cstdlib>
#include <exception>
#include <limits>
#include <optional>
#include <vector>

#include "bench/peers/peer_check.h"
#include "bench/peers/peer_main_util.h"
#include "bench/peers/peer_options.h"
#include "bench/peers/peer_report.h"
#include "bench/report/common_flags.h"
#include "bench/report/machine_info.h"
#include "bench/report/usage_error.h"

namespace cclab::bench {
namespace {

constexpr const char* kTool = "mpi_allreduce_perf";

MPI_Datatype mpiType(DataType t) {
  switch (t) {
    case DataType::Float64: return MPI_DOUBLE;
    case DataType::Int32: return MPI_INT32_T;
    default: return MPI_FLOAT;
  }
}

// Rank 0 of the job before MPI_Init: mpirun exports OMPI_COMM_WORLD_RANK (absent when run alone).
bool isFirstRankBeforeInit() {
  const char* r = std::getenv("OMPI_COMM_WORLD_RANK");
  return !r || std::string(r) == "0";
}

// Ranks of the job on this machine before MPI_Init: mpirun exports OMPI_COMM_WORLD_LOCAL_SIZE.
int localRanksBeforeInit() {
  const char* n = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  const int ranks = n ? std::atoi(n) : 1;
  return ranks > 0 ? ranks : 1;
}

std::string libraryVersion() {
  std::vector<char> buf(MPI_MAX_LIBRARY_VERSION_STRING);
  int len = 0;
  MPI_Get_library_version(buf.data(), &len);
  std::string s(buf.data(), static_cast<std::size_t>(len));
  const auto comma = s.find(',');
  return comma == std::string::npos ? s : s.substr(0, comma);
}

class MpiRun {
 public:
  MpiRun(const PeerOptions& o, int rank, int nranks) : o_(o), rank_(rank), nranks_(nranks) {}

  // Measures one size; the row is meaningful on rank 0 only.
  ResultRow measureSize(std::int64_t bytes, PeerRankBuffers& buf) {
    const CollectiveShape shape = shapeOf(plan::Collective::AllReduce, bytes, sizeOf(o_.type), nranks_);
    const Measurement oop = measure(shape, false, buf);
    const Measurement ip = measure(shape, true, buf);
    return peerRow(shape, o_.type, oop, ip);
  }

 private:
  void call(const CollectiveShape& shape, bool inPlace, PeerRankBuffers& buf) const {
    const int count = static_cast<int>(shape.count);  // MPI counts are int: fine up to 8 GiB of floats
    MPI_Allreduce(inPlace ? MPI_IN_PLACE : buf.send.data(), buf.recv.data(), count, mpiType(o_.type), MPI_SUM,
                  MPI_COMM_WORLD);
  }

  Measurement measure(const CollectiveShape& shape, bool inPlace, PeerRankBuffers& buf) {
    const IterationOptions& it = o_.iteration;
    const PeerAllReduceCheck check(o_.type, nranks_, shape.count, seed_++);
    void* input = inPlace ? buf.recv.data() : buf.send.data();
    if (it.check) check.fillInput(rank_, input);
    const int warmup = it.warmupAt(shape.sizeBytes);
    const int iters = it.itersAt(shape.sizeBytes);
    for (int i = 0; i < warmup; ++i) call(shape, inPlace, buf);
    MPI_Barrier(MPI_COMM_WORLD);
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < iters * it.aggIters; ++i) call(shape, inPlace, buf);
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    const double mine = elapsed.count() / (static_cast<double>(iters) * it.aggIters);
    std::vector<double> all(static_cast<std::size_t>(nranks_));
    MPI_Gather(&mine, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    std::optional<std::int64_t> wrong;
    if (it.check) {
      check.fillInput(rank_, input);
      call(shape, inPlace, buf);
      const long long local = check.countWrong(buf.recv.data(), buf.expected.data());
      long long total = 0;
      MPI_Reduce(&local, &total, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
      wrong = total;
    }
    return peerMeasurement(shape, nranks_, combineTimes(it.average, all), wrong);
  }

  const PeerOptions& o_;
  int rank_;
  int nranks_;
  std::uint64_t seed_ = 1;
};

int run(int argc, char** argv) {
  PeerOptions o;
  std::optional<JsonReportFile> json;
  const bool first = isFirstRankBeforeInit();
  try {
    CommandLine cli(kTool);
    addPeerFlags(cli, o, false);
    cli.parse(argc, argv);
    if (o.help) {
      if (first) std::fputs(cli.usage().c_str(), stdout);
      return kExitOk;
    }
    validate(o.sweep);
    if (o.sweep.maxBytes / static_cast<std::int64_t>(sizeOf(o.type)) > std::numeric_limits<int>::max())
      throw UsageError("-e " + std::to_string(o.sweep.maxBytes) + " needs more elements than MPI's int count holds");
    if (!o.jsonPath.empty() && first) json.emplace(o.jsonPath);
    requirePeerMemory(o, localRanksBeforeInit());
  } catch (const UsageError& e) {
    return first ? peerFail(kTool, kExitUsage, e.what()) : kExitUsage;
  }

  MPI_Init(&argc, &argv);
  int rank = 0, nranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  const PeerIdentity id{kTool, "mpi", "MPI_Allreduce",
                        libraryVersion() + ", " + std::to_string(nranks) + " processes, MPI_Allreduce MPI_SUM"};
  const TablePrinter table(stdout);
  ResultLog log;
  int status = kExitOk;
  try {
    const std::size_t bytes = static_cast<std::size_t>(o.sweep.maxBytes);
    PeerRankBuffers buf(bytes, o.iteration.check != 0);
    if (rank == 0) {
      std::setvbuf(stdout, nullptr, _IOLBF, 0);
      printPeerHeader(table, id, o, nranks);
      table.columnHeader();
    }
    MpiRun runner(o, rank, nranks);
    for (std::int64_t size : sizesOf(o.sweep)) {
      ResultRow row = runner.measureSize(size, buf);
      if (rank == 0) table.row(row);
      log.add(std::move(row));
    }
    if (rank == 0) {
      table.footer(log);
      if (json) json->write(peerRunInfo(id, o, nranks, commandLineOf(argc, argv)), log);
      if (log.failedChecks()) status = kExitFailure;
    }
  } catch (const std::exception& e) {
    peerFail(kTool, kExitFailure, std::string("error: ") + e.what());
    MPI_Abort(MPI_COMM_WORLD, kExitFailure);
  }
  MPI_Finalize();
  return status;
}

}  // namespace
}  // namespace cclab::bench

int main(int argc, char** argv) { return cclab::bench::run(argc, argv); }
