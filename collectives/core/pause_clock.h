// PauseClock: how much of the elapsed time counts toward a wait's deadline — the time the waiting
// thread ran.
//
// A deadline exists to name a peer that stopped making progress. When the whole job is stopped
// (Ctrl-Z, SIGSTOP to every rank, a debugger), the waiter is stopped too, and on resume the wall time
// past its deadline says nothing about its peers: they were stopped with it. So a wait compares its
// deadline with PauseClock::now(), the steady clock minus the time its thread did not run since the
// wait began; a deadline taken from the steady clock at the start of the wait is compared unchanged.
//
// How it knows: every bounded wait checks its deadline at least every few milliseconds while its
// thread runs (its sleeps are at most 20 ms, its polls yield). Two checks of one thread further apart
// than kStopGap mean the thread did not run in between — its process was stopped, or the machine did
// not schedule it — and only kStopGap of that gap counts. A peer stopped alone (one rank SIGSTOPped
// while the others run) is still named after --timeout: its waiters run and check every few ms.
//
// Chosen over the alternatives: a SIGCONT handler would take a job-control signal from the application
// (and turn interrupted system calls in code that is not ours, MPI's progress engine, into EINTR); a
// job-wide heartbeat in shared memory does not reach across nodes; a thread's CPU time does not grow
// while it sleeps in a wait. This rule needs no signal, no shared state and no second thread, works
// alike for threads, processes and nodes (each waiter judges only its own run time), and errs one way
// only: a deadline can come later than the wall clock says (by a stop, or a long spell unscheduled),
// never earlier. A stop shorter than kStopGap counts in full.
//
// The bookkeeping is per thread (the time of its last check and the gaps it skipped), so a wait inside
// a wait (a round of a longer wait) sees the same gaps as the wait around it. Make a PauseClock on the
// waiting thread where the wait begins and read now() at every check of its deadline.
#pragma once

#include <chrono>

namespace cclab {

class PauseClock {
 public:
  using Clock = std::chrono::steady_clock;
  // Longer than any pause between two checks of a running wait (sleeps of at most 20 ms, a yield, a
  // scheduler quantum on a loaded machine), far shorter than any --timeout worth setting.
  static constexpr std::chrono::milliseconds kStopGap{250};

  explicit PauseClock(Clock::time_point start = Clock::now()) { restart(start); }

  // The wait begins again at `start` (a wait loop that keeps its clock between waits).
  void restart(Clock::time_point start) {
    Thread& t = thread();
    t.lastCheck = start;
    skippedAtStart_ = t.skipped;
  }

  // The steady clock now, less the time this thread did not run since the start.
  [[nodiscard]] Clock::time_point now() { return at(Clock::now()); }

  // The same for a steady-clock reading `wall` just taken on this thread.
  [[nodiscard]] Clock::time_point at(Clock::time_point wall) {
    Thread& t = thread();
    const Clock::duration gap = wall - t.lastCheck;
    if (gap > kStopGap) t.skipped += gap - kStopGap;
    if (gap > Clock::duration::zero()) t.lastCheck = wall;
    return wall - (t.skipped - skippedAtStart_);
  }

  // The time left out since the start.
  [[nodiscard]] Clock::duration skipped() const { return thread().skipped - skippedAtStart_; }

 private:
  struct Thread {
    Clock::time_point lastCheck{};
    Clock::duration skipped{0};
  };
  static Thread& thread() {
    static thread_local Thread t;  // constant-initialized: no guard on access
    return t;
  }
  Clock::duration skippedAtStart_{0};
};

}  // namespace cclab
