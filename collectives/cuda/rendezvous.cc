#include "collectives/cuda/rendezvous.h"

#include <algorithm>
#include <string>

#include "collectives/core/pause_clock.h"

namespace cclab::cuda {
namespace {

bool sameCall(const CollectiveArgs& a, const CollectiveArgs& b) {
  return a.collective == b.collective && a.count == b.count && a.type == b.type && a.op == b.op && a.root == b.root;
}

bool sameSchedule(const CollectiveOptions& a, const CollectiveOptions& b) {
  return a.algorithm == b.algorithm && a.sliceBytes == b.sliceBytes;
}

}  // namespace

Rendezvous::Rendezvous(int nranks)
    : nranks_(nranks),
      present_(static_cast<std::size_t>(nranks), 0),
      gaveUp_(static_cast<std::size_t>(nranks), 0),
      buffers_(static_cast<std::size_t>(nranks)) {}

void Rendezvous::arrive(int rank, const CollectiveArgs& args, RankBuffers buffers, const CollectiveOptions& options,
                        const IssueFn& issue) {
  if (rank < 0 || rank >= nranks_) throw InvalidArgument("cuda: rank " + std::to_string(rank) + " out of range");
  std::unique_lock lock(mutex_);
  const auto r = static_cast<std::size_t>(rank);
  if (present_[r]) throw InvalidArgument("cuda: rank " + std::to_string(rank) + " called again before its group completed");
  if (arrived_ == 0) {
    args_ = args;
    options_ = options;
  } else if (!sameCall(args_, args) || !sameSchedule(options_, options)) {
    throw InvalidArgument("cuda: rank " + std::to_string(rank) +
                          " called a collective that differs from the one the other ranks are waiting in");
  }
  present_[r] = 1;
  gaveUp_[r] = 0;
  buffers_[r] = buffers;
  ++arrived_;
  const std::uint64_t generation = generation_;

  if (arrived_ == nranks_) {
    const std::vector<RankBuffers> all = buffers_;
    const CollectiveArgs a = args_;
    const CollectiveOptions o = options_;
    arrived_ = 0;
    std::fill(present_.begin(), present_.end(), 0);
    std::fill(gaveUp_.begin(), gaveUp_.end(), 0);
    std::exception_ptr err;
    try {
      issue(a, all, o);  // under the lock: the other ranks only wait
    } catch (...) {
      err = std::current_exception();
    }
    error_ = err;
    ++generation_;
    done_.notify_all();
    if (err) std::rethrow_exception(err);
    return;
  }

  // In sleeps of at most kMaxSleep, so the timeout counts only the time this rank ran (a job stopped
  // as a whole resumes: collectives/core/pause_clock.h).
  constexpr std::chrono::milliseconds kMaxSleep{20};
  const auto issued = [&] { return generation_ != generation; };
  PauseClock clock;
  const auto deadline = PauseClock::Clock::now() + options.timeout;
  for (auto now = clock.now(); !issued() && now < deadline; now = clock.now())
    done_.wait_for(lock, std::min<std::chrono::nanoseconds>(deadline - now, kMaxSleep));
  if (!issued()) {
    std::string missing;  // ranks that never arrived (not those that arrived and gave up too)
    for (int q = 0; q < nranks_; ++q) {
      const auto i = static_cast<std::size_t>(q);
      if (!present_[i] && !gaveUp_[i] && q != rank) missing += (missing.empty() ? "" : ", ") + std::to_string(q);
    }
    present_[r] = 0;
    gaveUp_[r] = 1;
    if (--arrived_ == 0) std::fill(gaveUp_.begin(), gaveUp_.end(), 0);
    throw TimeoutError("cuda: rank " + std::to_string(rank) + " timed out after " +
                       std::to_string(options.timeout.count()) + " ms waiting for rank(s) " + missing +
                       " to call " + std::string(plan::name(args.collective)));
  }
  // The next generation needs this rank too, so error_ still belongs to ours.
  if (error_) std::rethrow_exception(error_);
}

}  // namespace cclab::cuda
