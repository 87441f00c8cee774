// Host executor: runs a Plan with one thread per rank, through shared memory: the slot transport of
// the executor core (plan::PlanRunner, collectives/plan/plan_runner.h), which owns the lanes, gates,
// dispatch and ReduceAll fold described below.
//
// Transfers are single-copy: a send publishes a pointer to the sender's own buffer in a slot of the
// connection (channel, from, to); the receiver reads (copies or reduces) straight from it, then marks
// the slot consumed. A sender that wants to overwrite data it has sent, or to return, first waits until
// the receiver consumed it. Each connection is a lock-free single-producer single-consumer ring of
// kSlots slots with two counters (posted, consumed); ops are cut into slices and run slice-major inside
// a phase (plan.h), so a ring step forwards slice s while slice s+1 arrives.
// Channels: a rank's thread runs all its channels interleaved, each with its own walker over its ops
// (channelOps), its own connections and its own sent-but-unread slices; it advances whichever channel
// can move, so a channel waiting for a slow peer never holds up another. Only when no channel can move
// does the rank wait: with one channel left on exactly the word it needs (as with one channel), with
// several on any of their words, then asleep on its doorbell, a word every peer bumps after posting to
// or consuming from this rank while it sleeps.
// Phase deps (plan.h, Plan::deps): a channel about to run the first slice of a phase checks its gates
// (plan/phase_deps.h) and stays put until the channels it depends on have passed the phases named. Only
// this rank's own channels open a gate, so a gated channel takes no part in the waits above (a pass
// that opened a gate is followed by another pass, not a wait). Channels linked by deps may touch the
// same elements, so with deps a write waits for the unread sends of every channel of the rank.
// ReduceAll takes one slot from every other rank on its channel and folds them in rank order (rank 0's
// value first, this rank's src at its own position), so every rank computes the same bits.
// Every wait spins briefly, then sleeps on a futex, and gives up after the timeout (no channel moved for
// that long) with a TimeoutError naming the rank it waited for and every rank that never arrived at
// the call; the others then abort too (no hang). A straggler's start delay is such a wait as well: it
// ends early on an abort and never outlasts the timeout.
// Each rank's arrival at each call (after its start delay) goes to an ArrivalLog (arrival_log.h).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "collectives/call/vocabulary.h"
#include "collectives/core/dtype.h"
#include "collectives/host/executor_base.h"
#include "collectives/host/arrival_log.h"
#include "collectives/host/rank_memory.h"
#include "collectives/host/wait.h"
#include "collectives/plan/plan.h"

namespace cclab::host {

// The busy phase of waits while every rank thread has a core of its own (CCLAB_SPIN_US overrides it);
// with more ranks than cores waits do not spin.
inline constexpr std::chrono::microseconds kSpinWhenCoresSuffice{50};

using RunOptions = cclab::RunOptions;  // the executors' one options struct (collectives/call/vocabulary.h)

class HostExecutor : public ExecutorBase {
 public:
  static constexpr std::uint32_t kSlots = 16;  // per connection (channel, from, to)

  explicit HostExecutor(int nranks);
  ~HostExecutor() override;

  // Runs rank `rank`'s ops of `plan` on the calling thread. One thread per rank at a time; every rank
  // must run the same sequence of plans.
  void run(int rank, const plan::Plan& plan, const RankMemory& memory, const RunOptions& options);
  // A count that grows whenever a slice is sent or read: unchanged for a whole timeout means stuck.
  [[nodiscard]] std::uint64_t progress() const;
  // Arrivals at the calls since the last resetArrivals() (ArrivalLog), and their reset: between calls.
  [[nodiscard]] ArrivalStats arrivalStats() const { return arrivals_.stats(); }
  void resetArrivals() { resetLog(); }
  // How long a wait stays busy before it sleeps (depends on ranks per core).
  [[nodiscard]] std::chrono::nanoseconds spin() const { return spin_; }

 private:
  // The two counters are written by different ranks: each sits in its own 128-byte block, as CPUs
  // fetch lines in pairs (the connections of a channel lie side by side in one array).
  struct alignas(128) Connection {
    std::array<const std::byte*, kSlots> slots{};
    alignas(128) WaitWord posted;    // slices published by the sender
    alignas(128) WaitWord consumed;  // slices the receiver has finished reading
  };
  class RankRun;
  struct RankState;  // a rank's per-channel state, kept between calls (no allocation per call)

  // The connections of channels 0..channels-1 exist afterwards (made on first use, kept until the end).
  void ensureChannels(int channels);
  Connection& connection(int channel, int from, int to) {
    return lanes_[static_cast<std::size_t>(channel)].load(std::memory_order_acquire)[from * nranks_ + to];
  }
  // Publishes slice `seq` on a connection (word: its posted), or marks it read (its consumed), and
  // rings the doorbell of `peer`, the connection's other rank, should it sleep.
  void publish(WaitWord& word, std::uint32_t seq, int peer);
  void wakeWaiters() override;  // every connection and doorbell
  [[nodiscard]] std::uint32_t started(int rank) const override;

  std::chrono::nanoseconds spin_;
  // lanes_[c]: channel c's nranks x nranks connections (null until a plan with that many channels ran).
  std::array<std::atomic<Connection*>, plan::kMaxChannels> lanes_{};
  std::vector<std::unique_ptr<Connection[]>> owned_;  // what lanes_ points to
  std::mutex lanesMutex_;                             // creating a lane
  std::unique_ptr<WaitWord[]> bells_;                 // bells_[r]: rank r's doorbell
  std::vector<std::unique_ptr<RankState>> states_;    // states_[r]: only rank r's thread touches it
};

}  // namespace cclab::host
