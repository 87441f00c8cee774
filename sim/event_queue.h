// The replay's event queue: (time, id) pairs popped smallest first, ties in time broken by the smaller
// id, exactly the order of std::priority_queue<std::pair<Micros, int>, ..., std::greater<>> (so a
// replay's result does not depend on which of the two it runs on), at a lower cost where many events
// share one time.
//
// Why: a symmetric plan runs in lockstep (every rank of a ring on a switch sends, receives and reduces
// at the same simulated times), so the queue holds thousands of events at a handful of times, and a
// binary heap of pairs spends log2(events) comparisons of two keys per push and pop on them. Here the
// events of one time sit in a bucket, and a heap orders the buckets by (time, smallest id): in a
// lockstep replay that heap has a few entries. Inside a bucket, ids pushed in increasing order (agents
// handled in id order) are appended to a sorted run, ids pushed in decreasing order (flows handled in
// id order, each waking its receiver: keys -1-id fall) go on a descending stack in front of it, and
// the rest into a small heap of ids; a push or pop of a run or stack end is O(1).
//
// Buckets are found by time among the few used last (kRecent); a push whose time is not among them
// opens a new bucket even where one with that time exists further back: two buckets of one time are
// still popped in (time, id) order, since the heap orders buckets by their smallest pair.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <functional>
#include <utility>
#include <vector>

#include "sim/units.h"

namespace cclab::sim {

class EventQueue {
 public:
  [[nodiscard]] bool empty() const { return heap_.empty(); }
  [[nodiscard]] std::size_t size() const { return size_; }
  [[nodiscard]] std::pair<Micros, int> top() const { return {heap_.front().time, heap_.front().id}; }

  void emplace(Micros t, int id) {
    ++size_;
    for (const int b : recent_) {
      if (b < 0) continue;
      Bucket& k = buckets_[static_cast<std::size_t>(b)];
      if (k.pos < 0 || k.time != t) continue;
      const int before = k.minId();
      k.insert(id);
      if (id < before) {  // its smallest pair fell: the bucket moves up
        heap_[static_cast<std::size_t>(k.pos)].id = id;
        siftUp(static_cast<std::size_t>(k.pos));
      }
      return;
    }
    int b = 0;
    if (free_.empty()) {
      b = static_cast<int>(buckets_.size());
      buckets_.emplace_back();
    } else {
      b = free_.back();
      free_.pop_back();
    }
    Bucket& k = buckets_[static_cast<std::size_t>(b)];
    k.time = t;
    k.run.push_back(id);
    k.pos = static_cast<int>(heap_.size());
    heap_.push_back({t, id, b});
    siftUp(heap_.size() - 1);
    recent_[next_] = b;
    next_ = (next_ + 1) % kRecent;
  }

  void pop() {
    --size_;
    const int b = heap_.front().bucket;
    Bucket& k = buckets_[static_cast<std::size_t>(b)];
    k.popMin();
    if (!k.empty()) {  // its smallest pair rose: the bucket moves down
      heap_.front().id = k.minId();
      siftDown(0);
      return;
    }
    k.release();
    free_.push_back(b);
    heap_.front() = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) {
      buckets_[static_cast<std::size_t>(heap_.front().bucket)].pos = 0;
      siftDown(0);
    }
  }

 private:
  static constexpr std::size_t kRecent = 4;
  // A bucket's memory is kept for reuse up to this many ids; a larger one is given back when it empties.
  static constexpr std::size_t kKeptCapacity = 4096;

  // The ids of one time: stack (descending pushes; its back the smallest), then run[head..] (ascending
  // pushes), every stack id <= every run id; the others in `rest`, a min-heap.
  struct Bucket {
    Micros time = 0;
    std::vector<int> stack, run, rest;
    std::size_t head = 0;
    int pos = -1;  // in heap_; -1 while free

    [[nodiscard]] bool empty() const { return stack.empty() && head == run.size() && rest.empty(); }
    [[nodiscard]] bool ordered() const { return !stack.empty() || head < run.size(); }
    [[nodiscard]] int orderedMin() const { return stack.empty() ? run[head] : stack.back(); }
    [[nodiscard]] int orderedMax() const { return head < run.size() ? run.back() : stack.front(); }
    [[nodiscard]] int minId() const {
      if (!ordered()) return rest.front();
      return rest.empty() ? orderedMin() : std::min(orderedMin(), rest.front());
    }
    void insert(int id) {
      if (!ordered() || id >= orderedMax()) {
        if (head == run.size()) {  // an empty run starts again at the front of its memory
          run.clear();
          head = 0;
        }
        run.push_back(id);
      } else if (id <= orderedMin()) {
        stack.push_back(id);
      } else {
        rest.push_back(id);
        std::push_heap(rest.begin(), rest.end(), std::greater<>());
      }
    }
    void popMin() {
      if (ordered() && (rest.empty() || orderedMin() <= rest.front())) {
        if (!stack.empty())
          stack.pop_back();
        else
          ++head;
        return;
      }
      std::pop_heap(rest.begin(), rest.end(), std::greater<>());
      rest.pop_back();
    }
    void release() {
      for (std::vector<int>* v : {&stack, &run, &rest}) {
        if (v->capacity() > kKeptCapacity)
          std::vector<int>().swap(*v);
        else
          v->clear();
      }
      head = 0;
      pos = -1;
    }
  };

  struct Node {
    Micros time;
    int id;      // the bucket's smallest id
    int bucket;
    [[nodiscard]] bool before(const Node& o) const { return time != o.time ? time < o.time : id < o.id; }
  };

  void place(std::size_t i, const Node& n) {
    heap_[i] = n;
    buckets_[static_cast<std::size_t>(n.bucket)].pos = static_cast<int>(i);
  }
  void siftUp(std::size_t i) {
    const Node n = heap_[i];
    while (i > 0) {
      const std::size_t parent = (i - 1) / 2;
      if (!n.before(heap_[parent])) break;
      place(i, heap_[parent]);
      i = parent;
    }
    place(i, n);
  }
  void siftDown(std::size_t i) {
    const Node n = heap_[i];
    const std::size_t size = heap_.size();
    for (;;) {
      std::size_t child = 2 * i + 1;
      if (child >= size) break;
      if (child + 1 < size && heap_[child + 1].before(heap_[child])) ++child;
      if (!heap_[child].before(n)) break;
      place(i, heap_[child]);
      i = child;
    }
    place(i, n);
  }

  std::vector<Bucket> buckets_;
  std::vector<int> free_;
  std::vector<Node> heap_;
  std::array<int, kRecent> recent_{-1, -1, -1, -1};
  std::size_t next_ = 0;
  std::size_t size_ = 0;
};

}  // namespace cclab::sim
