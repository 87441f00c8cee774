// Sharding as PyTorch's DistributedSampler: every epoch the dataset's indices are shuffled with a
// generator seeded by seed + epoch (the same permutation on every replica), the list is padded (by
// repeating its start) or cut to a multiple of the replica count, and replica r takes positions
// r, r + R, r + 2R, ... so all shards have the same length.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace cclab::trainer {

enum class Remainder : std::uint8_t { Pad, Drop };
Remainder parseRemainder(std::string_view s);  // "pad", "drop"; throws InvalidArgument
std::string_view name(Remainder r);

class DistributedSampler {
 public:
  // Throws InvalidArgument for size < 1, replicas < 1, a rank outside [0, replicas), or Drop with
  // fewer samples than replicas.
  DistributedSampler(std::int64_t datasetSize, int replicas, int rank, std::uint64_t seed, Remainder remainder,
                     bool shuffle = true);

  [[nodiscard]] std::int64_t samplesPerReplica() const { return perReplica_; }
  // This replica's indices for `epoch`, in order.
  [[nodiscard]] std::vector<std::int64_t> indices(int epoch) const;

 private:
  std::int64_t size_;
  int replicas_;
  int rank_;
  std::uint64_t seed_;
  Remainder remainder_;
  bool shuffle_;
  std::int64_t perReplica_;
};

// The epoch's whole index list before it is dealt out: the permutation (or 0..n-1 without shuffle),
// padded by repeating its start or cut to samplesPerReplica x replicas. Replica r's shard is
// positions r, r + R, ... of it.
std::vector<std::int64_t> epochIndexList(std::int64_t datasetSize, int replicas, std::uint64_t seed, int epoch,
                                         Remainder remainder, bool shuffle = true);

// The permutation of [0, n) every replica derives from seed + epoch (Fisher-Yates over mt19937_64,
// so it does not depend on the standard library's std::shuffle).
std::vector<std::int64_t> epochPermutation(std::int64_t n, std::uint64_t seed, int epoch);

}  // namespace cclab::trainer
