// The polling half of the one wait policy (collectives/core/bounded_wait.h is the sleeping half).
//
// Some waits have no word to sleep on: an MPI request completes only while its rank calls MPI_Test,
// a staged send moves only while its sender calls MPI. Such a wait must keep calling its poll, so it
// cannot sleep in the kernel until woken; it backs off instead, by the time since it began (or since
// the last progress):
//
//   busy     before `spin`:        poll again at once (a fast peer answers within microseconds);
//   yield    before `yieldUntil`:  sched_yield between polls (rank processes may outnumber the cores:
//                                  a peer that shares this core must get to run);
//   sleep    after:                sleep `sleep` between polls, if `sleep` is set (a long wait leaves
//                                  the core to others while still polling every few tens of µs);
//                                  otherwise keep yielding.
//
// As for the sleeping waits, every wait ends: at its deadline (boundedPoll) or after `timeout` without
// progress (IdlePoll), and an abort is checked at every poll. Deadlines are read on a PauseClock
// (collectives/core/pause_clock.h): only the time this thread ran counts, so a job stopped and resumed
// is not late.
//
// Two shapes:
//  - boundedPoll: one wait for one condition (MpiLinks::receive, MpiLinks::sent);
//  - IdlePoll: a loop driven from outside, which runs rounds over many things and tells the policy
//    whether a round moved anything (the MPI runner's waitForLanes, the gpu_proc step loop); the
//    timeout counts from the last progress.
#pragma once

#include <chrono>
#include <thread>

#include "collectives/core/bounded_wait.h"
#include "collectives/core/pause_clock.h"

namespace cclab {

// When a polling wait moves from one phase to the next, as times since it began (or since the last
// progress). The defaults: yield for ever, never sleep.
struct PollBackoff {
  std::chrono::nanoseconds spin{0};                                       // busy before this
  std::chrono::nanoseconds yieldUntil = std::chrono::nanoseconds::max();  // then yield before this
  std::chrono::nanoseconds sleep{0};  // then sleep this long between polls (zero: keep yielding)

  // What a wait `elapsed` into its idle spell does before it polls again.
  void pause(std::chrono::nanoseconds elapsed) const {
    if (elapsed < spin) return;
    if (elapsed < yieldUntil || sleep.count() <= 0)
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(sleep);
  }
};

// Calls poll() until it returns true (Ready), aborted() holds (Aborted), or `deadline` passes on the
// PauseClock (TimedOut, never before). Each round: poll, then the abort, then the deadline, so a poll
// that holds wins over a passed deadline and an abort over both; then it backs off by `backoff`.
template <class Poll, class Aborted>
WaitResult boundedPoll(Poll&& poll, Aborted&& aborted, std::chrono::steady_clock::time_point deadline, const PollBackoff& backoff) {
  const auto start = std::chrono::steady_clock::now();
  PauseClock clock(start);  // a stopped job is no late peer
  for (;;) {
    if (poll()) return WaitResult::Ready;
    const auto now = clock.now();
    if (aborted()) return WaitResult::Aborted;
    if (now >= deadline) return WaitResult::TimedOut;
    backoff.pause(now - start);
  }
}

// The policy of a loop that polls many things per round: the loop calls progress() after a round that
// moved something and idle() after one that moved nothing. idle() backs off by the time since the last
// progress and says false once `timeout` has passed without progress (the loop then reports its
// timeout). The time counts on a PauseClock, from construction or the last progress().
class IdlePoll {
 public:
  using Clock = std::chrono::steady_clock;

  IdlePoll(PollBackoff backoff, std::chrono::nanoseconds timeout) : backoff_(backoff), timeout_(timeout) {}

  // A round moved something: the idle spell starts over.
  void progress() { lastProgress_ = clock_.now(); }

  // A round moved nothing: false once more than `timeout` has passed since the last progress; else
  // backs off (busy, yield or sleep) and returns true.
  [[nodiscard]] bool idle() {
    const auto elapsed = clock_.now() - lastProgress_;
    if (elapsed > timeout_) return false;
    backoff_.pause(elapsed);
    return true;
  }

 private:
  PollBackoff backoff_;
  std::chrono::nanoseconds timeout_;
  PauseClock clock_;  // the timeout counts only time this thread ran (pause_clock.h)
  Clock::time_point lastProgress_ = clock_.now();
};

}  // namespace cclab
