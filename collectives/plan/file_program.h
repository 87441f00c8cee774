// What both algorithm-file readers build before it becomes a unit plan (internal to collectives/plan;
// algorithm_file.h): per GPU, threadblocks of steps, each step one or two ops (a receive, then a send
// of what it wrote), with MSCCL's dependency on one step of another threadblock.
//
// Local reduces (MSCCL's re: a receive into scratch, then a reduction of it into the data) become one
// receive-and-reduce: a receive into scratch whose chunks are all reduced by local reduces into one
// range of another buffer (the same offset between the two for every chunk) becomes a receive that
// reduces into that range, at the receive's place; the local reduces become dependencies only. The
// reduction order may then differ from MSCCL's; a local reduce of anything else is refused.
//
// toAlgorithmFile orders the steps of every (rank, channel) by running the whole program once with
// one message in flight per connection, as the plan's executors may run it (so a program that would
// deadlock is refused), gives the ops phases where the file has none (validate.h's rules: send and
// receive of a message share a phase; ops of a phase that touch the same elements start at the same
// element), and validates the result.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collectives/plan/algorithm_file.h"

namespace cclab::plan::files {

struct Step {
  std::vector<Op> ops;  // 0 (nop), 1, or 2 (receive, then send); channel and phase are set by the program
  int depTb = -1;       // waits for step depStep of threadblock depTb of the same GPU (-1: none)
  int depStep = -1;
  int phase = -1;       // -1: toAlgorithmFile chooses
  // MSCCL's re, MSCCL++'s reduce: dst = dst (op) src on this rank. A plan has no local reduce, so
  // toAlgorithmFile folds it into the receive that filled src (see fuseLocalReduces) or refuses it.
  // reduceAll (cclab's extension of MSCCL++'s reduce): dst = every rank's message reduced in rank
  // order, this rank's being reduceOperand; reduceSlots are the scratch ranges the others' arrived in.
  bool localReduce = false;
  bool reduceAll = false;
  Range reduceSrc, reduceDst;
  Range reduceOperand;  // the local value reduced with src (re: reduceDst itself)
  std::vector<Range> reduceSlots;
  std::string where;    // "gpu 3 tb 2 step 5", for errors
};

struct Threadblock {
  int channel = 0;
  std::vector<Step> steps;
};

struct Program {
  std::string name;
  Collective collective = Collective::AllReduce;
  int nranks = 0;
  std::int64_t unitCount = 0;  // chunks per rank buffer (see algorithm_file.h)
  std::int64_t scratchChunks = 0;
  int root = 0;
  int ranksPerNode = 0;
  int nphases = 1;  // at least this many phases (a plan may declare phases it leaves empty)
  // The file works in place only: allreduce, broadcast, reduce name the input buffer for the data
  // (mapped to the output after a first copy there); allgather reads its own block of the output (a
  // first copy of the input puts it there).
  bool inPlaceOnly = false;
  std::vector<std::vector<Threadblock>> gpus;  // gpus[rank][tb]
  std::vector<PhaseDep> deps;                  // from the file (cclab's extension), else none
};

AlgorithmFile toAlgorithmFile(Program program);

// The two formats' shared vocabulary: collective names ("allreduce", "allgather", "reduce_scatter" or
// "reducescatter", "broadcast", "reduce") and buffer names ("i"/"input", "o"/"output", "s"/"scratch");
// unknown names throw InvalidArgument naming `where`.
Collective collectiveNamed(const std::string& s, const std::string& where);
Buf bufferNamed(const std::string& s, const std::string& where);
const char* bufferName(Buf b);  // "i", "o", "s"

// Strict integer parsing for both readers: the whole text, within [lo, hi], else InvalidArgument
// naming `what`.
std::int64_t parseInteger(const std::string& text, std::int64_t lo, std::int64_t hi, const std::string& what);

}  // namespace cclab::plan::files
