// How the epoch's samples are split across data-parallel workers (--shard). Every mode gives every
// worker the same number of samples (DistributedSampler's samplesPerReplica: the dataset padded or
// cut to a multiple of the workers, --remainder) and, over the workers, the whole padded list, so
// the global batch and the epoch are the same in every mode and only the split differs:
//
//   shuffle-each-epoch  DistributedSampler: a new permutation every epoch (seed + epoch), dealt
//                       round-robin (worker r takes positions r, r + R, ...). The default.
//   shuffle-once        the epoch-0 permutation every epoch, dealt the same way.
//   contiguous          no shuffle: the file's order, worker r takes the r-th contiguous block.
//   label-skew:ALPHA    Dirichlet label skew (the federated-learning convention): for every class a
//                       draw p ~ Dir(ALPHA, ..., ALPHA) over the workers says which share of the
//                       class each worker gets; the matrix is then balanced (Sinkhorn scaling) so
//                       every worker holds the same number of samples and every class is given out
//                       whole. Small ALPHA concentrates each class on few workers; ALPHA -> inf is
//                       iid. The split is fixed for the run; each shard is reshuffled every epoch.
//   hard-to:RANK        worker RANK gets the hardest samples under a fixed rule: the nearest class
//                       mean classifier's margin, h = |x - mu_y|^2 - min over c != y of |x - mu_c|^2
//                       (mu_c: class c's mean over the training set; h > 0: closer to another class's
//                       mean than to its own). RANK takes the samplesPerReplica samples of largest
//                       h (ties: lower index first); the others are dealt round-robin to the other
//                       workers. Fixed for the run; each shard is reshuffled every epoch.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "trainer/data/dataset.h"
#include "trainer/data/sampler.h"

namespace cclab::trainer {

enum class ShardMode : std::uint8_t { ShuffleEachEpoch, ShuffleOnce, Contiguous, LabelSkew, HardTo };

struct ShardConfig {
  ShardMode mode = ShardMode::ShuffleEachEpoch;
  double alpha = 0.0;  // label-skew
  int rank = -1;       // hard-to
  // Whether the split is fixed per worker (label-skew, hard-to): async's shared queue cannot give it.
  [[nodiscard]] bool perWorker() const { return mode == ShardMode::LabelSkew || mode == ShardMode::HardTo; }
};

// "shuffle-each-epoch", "shuffle-once", "contiguous", "label-skew:ALPHA" (ALPHA > 0, finite),
// "hard-to:RANK" (RANK >= 0; checked against the workers by validate()); throws InvalidArgument.
ShardConfig parseShard(std::string_view s);
std::string format(const ShardConfig& s);

class ShardPlan {
 public:
  // Throws InvalidArgument as DistributedSampler does, and for hard-to with a rank outside [0, replicas).
  ShardPlan(const Dataset& train, int replicas, std::uint64_t seed, Remainder remainder, ShardConfig config);

  [[nodiscard]] std::int64_t samplesPerReplica() const { return perReplica_; }
  // Worker `rank`'s indices for `epoch`, in order (samplesPerReplica of them).
  [[nodiscard]] std::vector<std::int64_t> indices(int rank, int epoch) const;
  // The epoch's whole list in the order async's shared queue hands it out (not for perWorker modes).
  [[nodiscard]] std::vector<std::int64_t> queueOrder(int epoch) const;
  // perWorker modes: the fixed split, one list per worker (unshuffled); empty otherwise.
  [[nodiscard]] const std::vector<std::vector<std::int64_t>>& fixedShards() const { return fixed_; }

 private:
  std::int64_t size_;
  int replicas_;
  std::uint64_t seed_;
  Remainder remainder_;
  ShardConfig config_;
  std::int64_t perReplica_;
  std::vector<std::vector<std::int64_t>> fixed_;
};

// The hard-to rule's score for every training sample (larger: harder), as documented above.
std::vector<double> nearestMeanMargins(const Dataset& train);

// label-skew's per-worker class counts before samples are assigned: rows workers, columns classes;
// row sums = perReplica, column sums = classCounts. Exposed for tests.
std::vector<std::vector<std::int64_t>> labelSkewCounts(std::span<const std::int64_t> classCounts, int replicas,
                                                       std::int64_t perReplica, double alpha, std::uint64_t seed);

}  // namespace cclab::trainer
