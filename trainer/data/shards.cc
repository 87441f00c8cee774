#include "trainer/data/shards.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

#include "collectives/core/errors.h"

namespace cclab::trainer {
namespace {

// Uniform in (0, 1) from the generator's top 53 bits, so draws do not depend on the standard library.
double uniform01(std::mt19937_64& rng) { return (static_cast<double>(rng() >> 11) + 0.5) * 0x1p-53; }

double normal(std::mt19937_64& rng) {  // Box-Muller
  return std::sqrt(-2.0 * std::log(uniform01(rng))) * std::cos(2.0 * 3.14159265358979323846 * uniform01(rng));
}

// log of a Gamma(a, 1) draw: Marsaglia and Tsang's method for a >= 1 ("A simple method for generating
// gamma variables", ACM TOMS 26(3), 2000), and Gamma(a) = Gamma(a + 1) U^(1/a) for a < 1, in logs so a
// small a does not underflow.
double logGamma(std::mt19937_64& rng, double a) {
  if (a < 1.0) return logGamma(rng, a + 1.0) + std::log(uniform01(rng)) / a;
  const double d = a - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x = 0.0, v = 0.0;
    do {
      x = normal(rng);
      v = 1.0 + c * x;
    } while (v <= 0.0);
    v = v * v * v;
    const double u = uniform01(rng);
    if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return std::log(d * v);
  }
}

// A Dir(alpha, ..., alpha) draw over n entries, each floored at a tiny positive share (so the balancing
// below never divides by zero).
std::vector<double> dirichlet(std::mt19937_64& rng, int n, double alpha) {
  std::vector<double> g(static_cast<std::size_t>(n));
  for (double& x : g) x = logGamma(rng, alpha);
  const double top = *std::max_element(g.begin(), g.end());
  double sum = 0.0;
  for (double& x : g) sum += (x = std::exp(x - top));
  for (double& x : g) x = std::max(x / sum, 1e-100);
  return g;
}

std::vector<std::int64_t> reshuffled(const std::vector<std::int64_t>& fixed, std::uint64_t seed, int rank, int epoch) {
  const std::vector<std::int64_t> p =
      epochPermutation(static_cast<std::int64_t>(fixed.size()), seed ^ (0x9E3779B97F4A7C15ULL * static_cast<std::uint64_t>(rank + 1)), epoch);
  std::vector<std::int64_t> out(fixed.size());
  for (std::size_t i = 0; i < p.size(); ++i) out[i] = fixed[static_cast<std::size_t>(p[i])];
  return out;
}

}  // namespace

ShardConfig parseShard(std::string_view s) {
  ShardConfig c;
  const auto bad = [&](const std::string& why) {
    return InvalidArgument("--shard '" + std::string(s) + "': " + why +
                           " (shuffle-each-epoch, shuffle-once, contiguous, label-skew:ALPHA, hard-to:RANK)");
  };
  if (s == "shuffle-each-epoch") return c;
  if (s == "shuffle-once") {
    c.mode = ShardMode::ShuffleOnce;
    return c;
  }
  if (s == "contiguous") {
    c.mode = ShardMode::Contiguous;
    return c;
  }
  const auto colon = s.find(':');
  const std::string_view head = s.substr(0, colon), arg = colon == std::string_view::npos ? "" : s.substr(colon + 1);
  if (head == "label-skew") {
    c.mode = ShardMode::LabelSkew;
    std::size_t used = 0;
    try {
      c.alpha = std::stod(std::string(arg), &used);
    } catch (const std::exception&) {
      throw bad("ALPHA is not a number");
    }
    if (used != arg.size() || !std::isfinite(c.alpha) || c.alpha <= 0.0) throw bad("ALPHA must be a finite number > 0");
    return c;
  }
  if (head == "hard-to") {
    c.mode = ShardMode::HardTo;
    const auto [end, ec] = std::from_chars(arg.data(), arg.data() + arg.size(), c.rank);
    if (arg.empty() || ec != std::errc() || end != arg.data() + arg.size() || c.rank < 0) throw bad("RANK must be an integer >= 0");
    return c;
  }
  throw bad("unknown mode");
}

std::string format(const ShardConfig& s) {
  switch (s.mode) {
    case ShardMode::ShuffleEachEpoch: return "shuffle-each-epoch";
    case ShardMode::ShuffleOnce: return "shuffle-once";
    case ShardMode::Contiguous: return "contiguous";
    case ShardMode::LabelSkew: {
      char buf[32];
      const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, s.alpha);
      return "label-skew:" + std::string(buf, end);
    }
    case ShardMode::HardTo: return "hard-to:" + std::to_string(s.rank);
  }
  return "?";
}

std::vector<double> nearestMeanMargins(const Dataset& train) {
  const auto f = static_cast<std::size_t>(train.features);
  const auto k = static_cast<std::size_t>(train.classes);
  std::vector<double> mean(k * f, 0.0);
  std::vector<std::int64_t> count(k, 0);
  for (std::int64_t i = 0; i < train.size(); ++i) {
    const std::size_t c = train.labels[static_cast<std::size_t>(i)];
    const auto x = train.row(i);
    for (std::size_t j = 0; j < f; ++j) mean[c * f + j] += x[j];
    ++count[c];
  }
  for (std::size_t c = 0; c < k; ++c)
    for (std::size_t j = 0; j < f; ++j) mean[c * f + j] /= static_cast<double>(std::max<std::int64_t>(count[c], 1));
  std::vector<double> margin(static_cast<std::size_t>(train.size()));
  std::vector<double> d(k);
  for (std::int64_t i = 0; i < train.size(); ++i) {
    const auto x = train.row(i);
    for (std::size_t c = 0; c < k; ++c) {
      double s = 0.0;
      for (std::size_t j = 0; j < f; ++j) {
        const double e = x[j] - mean[c * f + j];
        s += e * e;
      }
      d[c] = s;
    }
    const std::size_t y = train.labels[static_cast<std::size_t>(i)];
    double other = std::numeric_limits<double>::infinity();
    for (std::size_t c = 0; c < k; ++c)
      if (c != y && count[c] > 0) other = std::min(other, d[c]);
    margin[static_cast<std::size_t>(i)] = std::isfinite(other) ? d[y] - other : 0.0;
  }
  return margin;
}

std::vector<std::vector<std::int64_t>> labelSkewCounts(std::span<const std::int64_t> classCounts, int replicas,
                                                       std::int64_t perReplica, double alpha, std::uint64_t seed) {
  const auto n = static_cast<std::size_t>(replicas);
  const std::size_t k = classCounts.size();
  std::mt19937_64 rng(seed ^ 0xD1B54A32D192ED03ULL);
  // t[r][c]: worker r's target share of class c, from one Dirichlet draw per class.
  std::vector<std::vector<double>> t(n, std::vector<double>(k));
  for (std::size_t c = 0; c < k; ++c) {
    const std::vector<double> p = dirichlet(rng, replicas, alpha);
    for (std::size_t r = 0; r < n; ++r) t[r][c] = p[r] * static_cast<double>(classCounts[c]);
  }
  // Sinkhorn balancing: rows to perReplica, columns to the class counts, columns last (exact).
  for (int it = 0; it < 2000; ++it) {
    double worst = 0.0;
    for (std::size_t r = 0; r < n; ++r) {
      const double s = std::accumulate(t[r].begin(), t[r].end(), 0.0);
      worst = std::max(worst, std::abs(s - static_cast<double>(perReplica)));
      for (double& x : t[r]) x *= static_cast<double>(perReplica) / s;
    }
    for (std::size_t c = 0; c < k; ++c) {
      double s = 0.0;
      for (std::size_t r = 0; r < n; ++r) s += t[r][c];
      if (s > 0.0)
        for (std::size_t r = 0; r < n; ++r) t[r][c] *= static_cast<double>(classCounts[c]) / s;
    }
    if (worst < 1e-6) break;
  }
  // Integer counts: each worker but the last rounds down, then adds (or removes) one sample at a time
  // where its target is furthest above (below) its count, within what is left of each class; the
  // last worker takes what is left (its row sums to perReplica because the totals agree).
  std::vector<std::int64_t> left(classCounts.begin(), classCounts.end());
  std::vector<std::vector<std::int64_t>> out(n, std::vector<std::int64_t>(k, 0));
  for (std::size_t r = 0; r + 1 < n; ++r) {
    auto& row = out[r];
    std::int64_t sum = 0;
    for (std::size_t c = 0; c < k; ++c) sum += row[c] = std::min(static_cast<std::int64_t>(std::floor(t[r][c])), left[c]);
    while (sum < perReplica) {
      std::size_t best = k;
      for (std::size_t c = 0; c < k; ++c)
        if (row[c] < left[c] && (best == k || t[r][c] - static_cast<double>(row[c]) > t[r][best] - static_cast<double>(row[best]))) best = c;
      if (best == k) throw Error("label-skew: no samples left to balance worker " + std::to_string(r));
      ++row[best];
      ++sum;
    }
    while (sum > perReplica) {
      std::size_t best = k;
      for (std::size_t c = 0; c < k; ++c)
        if (row[c] > 0 && (best == k || t[r][c] - static_cast<double>(row[c]) < t[r][best] - static_cast<double>(row[best]))) best = c;
      --row[best];
      --sum;
    }
    for (std::size_t c = 0; c < k; ++c) left[c] -= row[c];
  }
  out[n - 1] = left;
  return out;
}

ShardPlan::ShardPlan(const Dataset& train, int replicas, std::uint64_t seed, Remainder remainder, ShardConfig config)
    : size_(train.size()), replicas_(replicas), seed_(seed), remainder_(remainder), config_(config),
      perReplica_(DistributedSampler(train.size(), replicas, 0, seed, remainder).samplesPerReplica()) {
  if (config.mode == ShardMode::HardTo && (config.rank < 0 || config.rank >= replicas))
    throw InvalidArgument("--shard hard-to:" + std::to_string(config.rank) + ": the rank is not in [0, " +
                          std::to_string(replicas) + ")");
  if (!config.perWorker()) return;
  // The split is made once, from the epoch-0 list (padded or cut as --remainder says).
  const std::vector<std::int64_t> all = epochIndexList(size_, replicas, seed, 0, remainder);
  const auto n = static_cast<std::size_t>(replicas);
  fixed_.assign(n, {});
  if (config.mode == ShardMode::LabelSkew) {
    std::vector<std::vector<std::int64_t>> byClass(static_cast<std::size_t>(train.classes));
    for (const std::int64_t i : all) byClass[train.labels[static_cast<std::size_t>(i)]].push_back(i);
    std::vector<std::int64_t> counts;
    for (const auto& v : byClass) counts.push_back(static_cast<std::int64_t>(v.size()));
    const auto take = labelSkewCounts(counts, replicas, perReplica_, config.alpha, seed);
    for (std::size_t c = 0; c < byClass.size(); ++c) {
      std::size_t next = 0;
      for (std::size_t r = 0; r < n; ++r)
        for (std::int64_t j = 0; j < take[r][c]; ++j) fixed_[r].push_back(byClass[c][next++]);
    }
    return;
  }
  const std::vector<double> margin = nearestMeanMargins(train);
  std::vector<std::size_t> order(all.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const double ma = margin[static_cast<std::size_t>(all[a])], mb = margin[static_cast<std::size_t>(all[b])];
    return ma != mb ? ma > mb : all[a] < all[b];
  });
  std::vector<char> hard(all.size(), 0);
  for (std::int64_t i = 0; i < perReplica_; ++i) hard[order[static_cast<std::size_t>(i)]] = 1;
  const auto target = static_cast<std::size_t>(config.rank);
  std::size_t k = 0;
  for (std::size_t p = 0; p < all.size(); ++p) {
    if (hard[p]) {
      fixed_[target].push_back(all[p]);
      continue;
    }
    std::size_t r = k++ % (n - 1);  // round-robin over the other workers
    if (r >= target) ++r;
    fixed_[r].push_back(all[p]);
  }
}

std::vector<std::int64_t> ShardPlan::queueOrder(int epoch) const {
  switch (config_.mode) {
    case ShardMode::ShuffleEachEpoch: return epochIndexList(size_, replicas_, seed_, epoch, remainder_);
    case ShardMode::ShuffleOnce: return epochIndexList(size_, replicas_, seed_, 0, remainder_);
    case ShardMode::Contiguous: return epochIndexList(size_, replicas_, seed_, 0, remainder_, false);
    default: throw InvalidArgument("--shard " + format(config_) + " gives each worker its own shard: async's shared queue has none");
  }
}

std::vector<std::int64_t> ShardPlan::indices(int rank, int epoch) const {
  if (rank < 0 || rank >= replicas_) throw InvalidArgument("ShardPlan: rank " + std::to_string(rank) + " out of range");
  if (config_.perWorker()) return reshuffled(fixed_[static_cast<std::size_t>(rank)], seed_, rank, epoch);
  const std::vector<std::int64_t> all = queueOrder(epoch);
  std::vector<std::int64_t> mine;
  mine.reserve(static_cast<std::size_t>(perReplica_));
  if (config_.mode == ShardMode::Contiguous) {
    const auto begin = all.begin() + static_cast<std::ptrdiff_t>(rank * perReplica_);
    return {begin, begin + static_cast<std::ptrdiff_t>(perReplica_)};
  }
  for (std::int64_t i = rank; i < perReplica_ * replicas_; i += replicas_) mine.push_back(all[static_cast<std::size_t>(i)]);
  return mine;
}

}  // namespace cclab::trainer
