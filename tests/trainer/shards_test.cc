// --shard: every mode gives each worker the same number of samples and, over the workers, the whole
// epoch (hard-to's rule is checked on a case solved by hand); label-skew's ALPHA moves the workers'
// label histograms from iid to concentrated; the sync trainer's gradient variance equals a direct
// computation from the workers' gradients.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "collectives/communicator.h"
#include "collectives/core/errors.h"
#include "test_util.h"
#include "trainer/data/shards.h"
#include "trainer/model/mlp.h"
#include "trainer/run/gradient_step.h"
#include "trainer/sync/sync_trainer.h"

namespace cclab::trainer {
namespace {

// n samples of `classes` labels in a shuffled order, one feature each (its label plus noise).
Dataset labelled(std::int64_t n, int classes, std::uint64_t seed) {
  Dataset d;
  d.features = 1;
  d.classes = classes;
  std::mt19937_64 rng(seed);
  for (std::int64_t i = 0; i < n; ++i) {
    const auto y = static_cast<std::uint8_t>(rng() % static_cast<std::uint64_t>(classes));
    d.labels.push_back(y);
    d.values.push_back(static_cast<float>(y) + static_cast<float>(rng() % 1000) / 1000.0F);
  }
  return d;
}

std::vector<ShardConfig> everyMode(int hardRank) {
  return {parseShard("shuffle-each-epoch"), parseShard("shuffle-once"), parseShard("contiguous"),
          parseShard("label-skew:0.1"), parseShard("label-skew:1000"), parseShard("hard-to:" + std::to_string(hardRank))};
}

TEST(Shards, EveryModeGivesEqualShardsThatCoverTheEpoch) {
  const Dataset d = labelled(997, 10, 5);
  for (const int n : {1, 3, 7})
    for (const Remainder rem : {Remainder::Pad, Remainder::Drop})
      for (const ShardConfig& mode : everyMode(n - 1))
        for (const int epoch : {0, 2}) {
          const ShardPlan plan(d, n, 11, rem, mode);
          std::vector<std::int64_t> all;
          for (int r = 0; r < n; ++r) {
            const auto mine = plan.indices(r, epoch);
            ASSERT_EQ(static_cast<std::int64_t>(mine.size()), plan.samplesPerReplica()) << format(mode) << " rank " << r;
            all.insert(all.end(), mine.begin(), mine.end());
          }
          // The list the mode splits, padded or cut: this epoch's permutation (shuffle-each-epoch), the
          // file's order (contiguous), the first epoch's permutation (the others).
          const bool each = mode.mode == ShardMode::ShuffleEachEpoch, file = mode.mode == ShardMode::Contiguous;
          std::vector<std::int64_t> want = epochIndexList(d.size(), n, 11, each ? epoch : 0, rem, !file);
          std::sort(all.begin(), all.end());
          std::sort(want.begin(), want.end());
          EXPECT_EQ(all, want) << format(mode) << " " << n << " workers " << name(rem) << " epoch " << epoch;
        }
}

TEST(Shards, ShuffleModesDealAsDistributedSamplerAndContiguousKeepsTheFileOrder) {
  const Dataset d = labelled(1001, 10, 6);
  const ShardPlan each(d, 4, 9, Remainder::Pad, parseShard("shuffle-each-epoch"));
  const ShardPlan once(d, 4, 9, Remainder::Pad, parseShard("shuffle-once"));
  const ShardPlan block(d, 4, 9, Remainder::Drop, parseShard("contiguous"));
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(each.indices(r, 3), DistributedSampler(d.size(), 4, r, 9, Remainder::Pad).indices(3));
    EXPECT_NE(each.indices(r, 3), each.indices(r, 4));
    EXPECT_EQ(once.indices(r, 5), each.indices(r, 0));
    std::vector<std::int64_t> want(250);
    std::iota(want.begin(), want.end(), std::int64_t{250} * r);
    EXPECT_EQ(block.indices(r, 1), want);
  }
}

// Total variation distance between worker r's label histogram and the whole list's.
std::vector<double> labelDistances(const Dataset& d, const ShardPlan& plan, int n) {
  std::vector<double> global(static_cast<std::size_t>(d.classes), 0.0);
  std::vector<std::vector<double>> mine(static_cast<std::size_t>(n), global);
  for (int r = 0; r < n; ++r)
    for (const std::int64_t i : plan.indices(r, 0)) {
      mine[static_cast<std::size_t>(r)][d.labels[static_cast<std::size_t>(i)]] += 1.0;
      global[d.labels[static_cast<std::size_t>(i)]] += 1.0;
    }
  const double total = std::accumulate(global.begin(), global.end(), 0.0);
  std::vector<double> tv;
  for (const auto& h : mine) {
    const double size = std::accumulate(h.begin(), h.end(), 0.0);
    double s = 0.0;
    for (std::size_t c = 0; c < h.size(); ++c) s += std::abs(h[c] / size - global[c] / total);
    tv.push_back(0.5 * s);
  }
  return tv;
}

TEST(Shards, LabelSkewLargeAlphaIsIidAndSmallAlphaConcentratesLabels) {
  const Dataset d = labelled(20000, 10, 8);
  constexpr int kWorkers = 8;
  for (const std::uint64_t seed : {1ULL, 2ULL, 3ULL}) {
    const auto iid = labelDistances(d, ShardPlan(d, kWorkers, seed, Remainder::Pad, parseShard("label-skew:1000")), kWorkers);
    const auto skew = labelDistances(d, ShardPlan(d, kWorkers, seed, Remainder::Pad, parseShard("label-skew:0.05")), kWorkers);
    const auto plain = labelDistances(d, ShardPlan(d, kWorkers, seed, Remainder::Pad, ShardConfig{}), kWorkers);
    // Iid shards of 2500 samples over 10 classes sit a few percent from the global histogram (the
    // round-robin deal, for scale); ALPHA 1000 must too, ALPHA 0.05 must put most of each shard elsewhere.
    EXPECT_LT(*std::max_element(plain.begin(), plain.end()), 0.05);
    EXPECT_LT(*std::max_element(iid.begin(), iid.end()), 0.05) << "seed " << seed;
    EXPECT_GT(std::accumulate(skew.begin(), skew.end(), 0.0) / kWorkers, 0.5) << "seed " << seed;
  }
}

TEST(Shards, LabelSkewCountsHaveTheRightMargins) {
  const std::vector<std::int64_t> counts{300, 7, 0, 1250, 443};  // 2000 = 5 workers x 400
  for (const double alpha : {0.01, 0.3, 5.0, 1e6}) {
    const auto m = labelSkewCounts(counts, 5, 400, alpha, 4);
    std::vector<std::int64_t> cols(counts.size(), 0);
    for (const auto& row : m) {
      EXPECT_EQ(std::accumulate(row.begin(), row.end(), std::int64_t{0}), 400) << alpha;
      for (std::size_t c = 0; c < row.size(); ++c) {
        EXPECT_GE(row[c], 0);
        cols[c] += row[c];
      }
    }
    EXPECT_EQ(cols, counts) << alpha;
  }
}

TEST(Shards, HardToGivesTheRankTheSamplesOfLargestMargin) {
  // One feature; class 0 mostly at 0 with three samples at 9.5, class 1 at 10. Class 0's mean is
  // 3 x 9.5 / 20 = 1.425: the three stray samples are far nearer class 1's mean, margin
  // (9.5 - 1.425)^2 - (9.5 - 10)^2 = 64.955625; every class-1 sample has margin 0 - 8.575^2 < 0.
  Dataset d;
  d.features = 1;
  d.classes = 2;
  for (int i = 0; i < 40; ++i) {
    const bool one = i % 2 == 1;
    const bool stray = !one && (i == 6 || i == 20 || i == 34);
    d.labels.push_back(one ? 1 : 0);
    d.values.push_back(one ? 10.0F : (stray ? 9.5F : 0.0F));
  }
  const std::vector<double> m = nearestMeanMargins(d);
  EXPECT_NEAR(m[6], 64.955625, 1e-9);
  EXPECT_NEAR(m[1], -8.575 * 8.575, 1e-9);
  EXPECT_NEAR(m[0], 1.425 * 1.425 - 100.0, 1e-9);
  const ShardPlan plan(d, 4, 3, Remainder::Pad, parseShard("hard-to:2"));
  auto hard = plan.indices(2, 1);
  std::sort(hard.begin(), hard.end());
  ASSERT_EQ(hard.size(), 10U);
  for (const std::int64_t stray : {6, 20, 34}) EXPECT_TRUE(std::binary_search(hard.begin(), hard.end(), stray)) << stray;
  // The other seven are class-1 samples: their margin, -73.5, is above that of class 0's samples at 0, -98.0.
  for (const std::int64_t i : hard) {
    if (i != 6 && i != 20 && i != 34) {
      EXPECT_EQ(d.labels[static_cast<std::size_t>(i)], 1) << i;
    }
  }
  // The rest is dealt to the other ranks, none of the strays among them.
  for (const int r : {0, 1, 3})
    for (const std::int64_t i : plan.indices(r, 0)) EXPECT_FALSE(i == 6 || i == 20 || i == 34) << r;
}

TEST(Shards, BadSpecsAreRefused) {
  for (const char* bad : {"", "random", "label-skew", "label-skew:", "label-skew:0", "label-skew:-1", "label-skew:inf",
                          "label-skew:1x", "hard-to", "hard-to:", "hard-to:-1", "hard-to:1.5", "contiguous:1"})
    EXPECT_THROW(parseShard(bad), InvalidArgument) << bad;
  EXPECT_EQ(format(parseShard("label-skew:0.5")), "label-skew:0.5");
  EXPECT_EQ(format(parseShard("hard-to:3")), "hard-to:3");
  TrainConfig c = testing::tinyConfig(Mode::Sync, 4, 32);
  c.shard = parseShard("hard-to:4");
  EXPECT_THROW(validate(c), InvalidArgument);
  c.shard = parseShard("label-skew:1");
  c.mode = Mode::Async;
  EXPECT_THROW(validate(c), InvalidArgument);
  c.shard = parseShard("contiguous");
  EXPECT_NO_THROW(validate(c));
}

// The first step's gradient statistics from the run against the workers' gradients computed one by
// one at the initial parameters, in double: mean, norms and the variance (1/N) sum |g_r - gbar|^2.
TEST(GradientStats, VarianceEqualsADirectComputation) {
  const DataSplit data = testing::tinyData(515, 64);
  for (const char* shard : {"shuffle-each-epoch", "label-skew:0.2", "hard-to:1"}) {
    TrainConfig c = testing::tinyConfig(Mode::Sync, 3, 3 * 12);
    c.epochs = 1;
    c.maxStepsPerEpoch = 2;
    c.shard = parseShard(shard);
    c.sync.bucketBytes = 256;  // several buckets: each worker's norm must be taken before its bucket is reduced
    c.sync.firstBucketBytes = 64;
    auto comm = makeCommunicator(Backend::Host, {c.workers});
    const RunResult run = runSync(c, data, *comm);

    const Mlp model{ParameterLayout(c.widths)};
    std::vector<float> w(static_cast<std::size_t>(model.layout().parameterCount()));
    model.initialize(w, c.seed);
    const ShardPlan plan(data.train, c.workers, c.seed, c.remainder, c.shard);
    GradientStep step(model, data.train, c.workerBatch(), 1);
    const RunClock clock;
    ComputeThrottle none;
    std::vector<std::vector<double>> g;
    for (int r = 0; r < c.workers; ++r) {
      std::vector<float> gr(w.size());
      const auto idx = plan.indices(r, 0);
      step.compute(w, std::span<const std::int64_t>(idx).first(static_cast<std::size_t>(c.workerBatch())), gr, clock, none);
      g.emplace_back(gr.begin(), gr.end());
    }
    std::vector<double> mean(w.size(), 0.0);
    for (const auto& gr : g)
      for (std::size_t i = 0; i < w.size(); ++i) mean[i] += gr[i] / c.workers;
    double variance = 0.0, meanSq = 0.0;
    for (std::size_t i = 0; i < w.size(); ++i) meanSq += mean[i] * mean[i];
    std::vector<double> norms;
    for (const auto& gr : g) {
      double dev = 0.0, sq = 0.0;
      for (std::size_t i = 0; i < w.size(); ++i) {
        dev += (gr[i] - mean[i]) * (gr[i] - mean[i]);
        sq += gr[i] * gr[i];
      }
      variance += dev / c.workers;
      norms.push_back(std::sqrt(sq));
    }
    ASSERT_GT(variance, 1e-6 * meanSq) << shard << ": a variance this small would not test the subtraction";
    int seen = 0;
    for (const StepRecord& r : run.steps) {
      if (r.epoch != 0 || r.step != 0) continue;
      ++seen;
      EXPECT_NEAR(r.gradVariance, variance, 1e-6 * variance) << shard << " rank " << r.rank;
      EXPECT_NEAR(r.meanGradNorm, std::sqrt(meanSq), 1e-6 * std::sqrt(meanSq)) << shard;
      EXPECT_NEAR(std::sqrt(r.gradSqNorm), norms[static_cast<std::size_t>(r.rank)], 1e-6 * norms[static_cast<std::size_t>(r.rank)]);
    }
    EXPECT_EQ(seen, c.workers);
    for (const StepRecord& r : run.steps) EXPECT_GE(r.gradVariance, 0.0) << "every sync step has statistics";
  }
}

}  // namespace
}  // namespace cclab::trainer
