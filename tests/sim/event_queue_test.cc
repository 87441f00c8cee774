// The replay's event queue pops exactly what a binary heap of (time, id) pairs pops, on random pushes
// and pops shaped like a replay's (many events at one time, ids pushed rising, falling or mixed).
#include "sim/event_queue.h"

#include <gtest/gtest.h>

#include <functional>
#include <queue>
#include <random>
#include <utility>
#include <vector>

namespace cclab::sim {
namespace {

using Reference = std::priority_queue<std::pair<Micros, int>, std::vector<std::pair<Micros, int>>, std::greater<>>;

enum class Ids { Rising, Falling, Random, Mixed };

// Runs `ops` random operations on both queues; times are drawn from `times` distinct values at or
// after the last popped time (a replay never queues an event before the one it handles).
void compare(std::uint32_t seed, int ops, int times, Ids ids, double popShare) {
  std::mt19937 rng(seed);
  EventQueue q;
  Reference ref;
  Micros now = 0;
  int rising = 0, falling = 0;
  for (int i = 0; i < ops; ++i) {
    if (!ref.empty() && std::uniform_real_distribution<>(0, 1)(rng) < popShare) {
      ASSERT_FALSE(q.empty());
      ASSERT_EQ(q.top(), ref.top()) << "seed " << seed << " op " << i;
      now = ref.top().first;
      q.pop();
      ref.pop();
      ASSERT_EQ(q.size(), ref.size());
      continue;
    }
    const Micros t = now + std::uniform_int_distribution<>(0, times - 1)(rng) * 0.25;
    int id = 0;
    switch (ids) {
      case Ids::Rising: id = rising++ % 5000 - 2500; break;
      case Ids::Falling: id = 2500 - falling++ % 5000; break;
      case Ids::Random: id = std::uniform_int_distribution<>(-3000, 3000)(rng); break;
      case Ids::Mixed: {
        const int k = std::uniform_int_distribution<>(0, 2)(rng);
        id = k == 0 ? rising++ % 5000 : k == 1 ? -1 - falling++ % 5000 : std::uniform_int_distribution<>(-100, 100)(rng);
        break;
      }
    }
    q.emplace(t, id);
    ref.emplace(t, id);
    ASSERT_EQ(q.top(), ref.top()) << "seed " << seed << " op " << i;
  }
  while (!ref.empty()) {
    ASSERT_EQ(q.top(), ref.top());
    q.pop();
    ref.pop();
  }
  EXPECT_TRUE(q.empty());
}

TEST(EventQueue, PopsWhatABinaryHeapPops) {
  std::uint32_t seed = 1;
  for (const Ids ids : {Ids::Rising, Ids::Falling, Ids::Random, Ids::Mixed})
    for (const int times : {1, 2, 3, 7, 1000})
      for (const double popShare : {0.2, 0.5, 0.8}) compare(seed++, 20000, times, ids, popShare);
}

TEST(EventQueue, EmptiesAndRefills) {
  EventQueue q;
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 100; ++i) q.emplace(round + (i % 3), 100 - i);
    EXPECT_EQ(q.size(), 100u);
    EXPECT_EQ(q.top(), std::make_pair(static_cast<Micros>(round), 1));
    std::pair<Micros, int> last{-1, 0};
    while (!q.empty()) {
      EXPECT_LE(last, q.top());
      last = q.top();
      q.pop();
    }
  }
}

}  // namespace
}  // namespace cclab::sim
