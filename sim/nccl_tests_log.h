// nccl-tests' text output (all_reduce_perf and every *_perf of NVIDIA/nccl-tests, or this project's
// bench/*_perf, which prints the same table) read as measured runs for `cclab-sim compare` and
// `calibrate`.
//
// What is read, line by line (a launcher's label in front, srun --label's "0: " or OpenMPI's
// "[1,0]<stdout>:", is dropped first):
//  - "# nThread T nGpus G ... graph: B" starts a run (several runs may follow one another in a file);
//    so does the table's "#  size  count  type ..." header outside a run (a table posted alone);
//  - "#  Rank R ..." lines: the run's ranks (nranks = the largest R + 1, at most kMaxLogRanks); a
//    run without them takes the caller's rank count, or is refused;
//  - the collective: "# Collective test starting: NAME_perf", else the last command line naming a
//    NAME_perf binary before the run, else the caller's choice (a log whose collective none of these
//    names is refused in one line: reduce_scatter_perf and all_reduce_perf print the same columns);
//  - table rows: size count type redop root time algbw busbw #wrong (out-of-place) time algbw busbw
//    #wrong (in-place); older tables without the root column are read too. A row is taken only when
//    every field reads, count agrees with size and the type, algbw agrees with size / time (to the
//    printed precision), and its type, redop and root fit the run's collective; anything else that
//    looks like a row (a truncated last line, a row of another collective) is skipped and counted.
//    A row with one good time column keeps it; the other (0, negative, NaN, inf, algbw off) is
//    dropped, counted (droppedCells) and warned about.
// Other lines (MPI warnings, NCCL INFO, shell prompts) are ignored. A file with no row is refused.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "collectives/plan/plan.h"
#include "sim/measured.h"
#include "sim/units.h"

namespace cclab::sim {

struct NcclTestsRow {
  Bytes size = 0;
  std::int64_t count = 0;
  std::string type, redop;
  int root = -1;
  Micros oopTime = 0, ipTime = 0;  // 0: the column did not read (never both)
  GBps oopBusbw = 0, ipBusbw = 0;
  int line = 0;
};

struct NcclTestsRun {
  std::string source;
  int index = 0;              // 0, 1, ... in the file
  std::string binary;         // "all_reduce_perf" (the name the log gives, without _mpi), or "" when chosen
  plan::Collective collective = plan::Collective::AllReduce;
  int nranks = 0;
  int threads = 1, gpus = 1;  // nThread, nGpus
  bool graph = false;         // -G: CUDA graph launches
  std::vector<NcclTestsRow> rows;
};

struct NcclTestsLog {
  std::vector<NcclTestsRun> runs;
  int skippedRows = 0;                 // lines that looked like rows but were not taken
  int droppedCells = 0;                // time columns of taken rows that did not read (the row kept its other one)
  std::vector<std::string> warnings;   // one per skipped row or run (at most the first 20 kept)
};

// Most rows and runs one log may hold (a sweep of every power of two has 35 rows; far more is not a log).
inline constexpr std::size_t kMaxLogRows = 100000;
// Most ranks of one run ('#  Rank N' up to this minus 1): the replay's own bound (kMaxReplayRanks), and
// beyond the largest published nccl-tests runs; checked as the line is read, before anything is built.
inline constexpr int kMaxLogRanks = 32768;

// `collective`: used where the log does not name one; `ranks` (> 0): the rank count of runs whose log
// has no '#  Rank N' lines (the log's own lines win where it has them). Throws MeasuredError (one
// line, naming the file and line) for a log with no table, no ranks, or no named collective.
NcclTestsLog parseNcclTestsLog(const std::string& text, const std::string& source,
                               std::optional<plan::Collective> collective = std::nullopt, int ranks = 0);
NcclTestsLog loadNcclTestsLog(const std::string& path, std::optional<plan::Collective> collective = std::nullopt, int ranks = 0);

// A measured file of either kind: cclab's -J JSON (a file whose first non-blank character is '{') as a
// run of out-of-place rows, or a nccl-tests text log.
NcclTestsLog loadMeasuredLog(const std::string& path, std::optional<plan::Collective> collective = std::nullopt, int ranks = 0);

// A run as calibrate's Measurement (out-of-place times, else in-place), with the given algorithm.
Measurement toMeasurement(const NcclTestsRun& run, plan::Algorithm algorithm);

// "all_reduce_perf" -> AllReduce, ... (all_reduce, reduce_scatter, all_gather, broadcast, reduce); nothing
// for the others (alltoall, sendrecv, gather, scatter, hypercube: no plan of ours).
std::optional<plan::Collective> collectiveOfBinary(const std::string& name);

}  // namespace cclab::sim
