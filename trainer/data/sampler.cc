#include "trainer/data/sampler.h"

#include <numeric>
#include <random>
#include <string>

#include "collectives/core/errors.h"

namespace cclab::trainer {

Remainder parseRemainder(std::string_view s) {
  if (s == "pad") return Remainder::Pad;
  if (s == "drop") return Remainder::Drop;
  throw InvalidArgument("unknown remainder policy '" + std::string(s) + "' (pad, drop)");
}

std::string_view name(Remainder r) { return r == Remainder::Pad ? "pad" : "drop"; }

std::vector<std::int64_t> epochPermutation(std::int64_t n, std::uint64_t seed, int epoch) {
  std::vector<std::int64_t> p(static_cast<std::size_t>(n));
  std::iota(p.begin(), p.end(), std::int64_t{0});
  std::mt19937_64 rng(seed + static_cast<std::uint64_t>(epoch));
  for (std::int64_t i = n - 1; i > 0; --i) {
    const auto j = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(i + 1));
    std::swap(p[static_cast<std::size_t>(i)], p[static_cast<std::size_t>(j)]);
  }
  return p;
}

DistributedSampler::DistributedSampler(std::int64_t datasetSize, int replicas, int rank, std::uint64_t seed,
                                       Remainder remainder, bool shuffle)
    : size_(datasetSize), replicas_(replicas), rank_(rank), seed_(seed), remainder_(remainder), shuffle_(shuffle) {
  if (datasetSize < 1) throw InvalidArgument("sampler: dataset is empty");
  if (replicas < 1) throw InvalidArgument("sampler: replicas must be >= 1");
  if (rank < 0 || rank >= replicas)
    throw InvalidArgument("sampler: rank " + std::to_string(rank) + " is not in [0, " + std::to_string(replicas) + ")");
  if (remainder == Remainder::Drop && datasetSize < replicas)
    throw InvalidArgument("sampler: cannot drop to equal shards: fewer samples than replicas");
  perReplica_ = remainder == Remainder::Drop ? datasetSize / replicas : (datasetSize + replicas - 1) / replicas;
}

std::vector<std::int64_t> epochIndexList(std::int64_t datasetSize, int replicas, std::uint64_t seed, int epoch,
                                         Remainder remainder, bool shuffle) {
  const std::int64_t perReplica = DistributedSampler(datasetSize, replicas, 0, seed, remainder, shuffle).samplesPerReplica();
  std::vector<std::int64_t> all;
  if (shuffle) {
    all = epochPermutation(datasetSize, seed, epoch);
  } else {
    all.resize(static_cast<std::size_t>(datasetSize));
    std::iota(all.begin(), all.end(), std::int64_t{0});
  }
  const std::int64_t total = perReplica * replicas;
  for (std::int64_t i = datasetSize; i < total; ++i) all.push_back(all[static_cast<std::size_t>((i - datasetSize) % datasetSize)]);
  all.resize(static_cast<std::size_t>(total));
  return all;
}

std::vector<std::int64_t> DistributedSampler::indices(int epoch) const {
  const std::int64_t total = perReplica_ * replicas_;
  const std::vector<std::int64_t> all = epochIndexList(size_, replicas_, seed_, epoch, remainder_, shuffle_);
  std::vector<std::int64_t> mine;
  mine.reserve(static_cast<std::size_t>(perReplica_));
  for (std::int64_t i = rank_; i < total; i += replicas_) mine.push_back(all[static_cast<std::size_t>(i)]);
  return mine;
}

}  // namespace cclab::trainer
