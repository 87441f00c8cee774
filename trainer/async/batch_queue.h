// Async's work queue: the epoch's batches (the sampler's whole index list, cut into worker-sized
// batches in order) claimed by whichever worker is free. Sync deals fixed shards (a step needs every
// worker); async must not make a fast worker wait for a straggler's share, so a slow worker simply
// claims fewer batches. Every sample is still visited once per epoch (plus the sampler's padding).
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace cclab::trainer {

class BatchQueue {
 public:
  // Prepares an epoch: `batches` batches of `batchSize` from the front of `indices`.
  void reset(std::vector<std::int64_t> indices, std::int64_t batchSize, std::int64_t batches);
  struct Claim {
    std::int64_t batch = 0;  // position in the epoch
    std::span<const std::int64_t> indices;
  };
  // The next unclaimed batch, or nullopt when the epoch's batches are all taken. Thread-safe.
  std::optional<Claim> next();

 private:
  std::vector<std::int64_t> indices_;
  std::int64_t batchSize_ = 0;
  std::int64_t batches_ = 0;
  std::atomic<std::int64_t> next_{0};
};

}  // namespace cclab::trainer
