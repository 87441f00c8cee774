#include "trainer/device/virtual_gate.h"

#include <algorithm>
#include <string>

#include "collectives/core/errors.h"

namespace cclab::trainer {

VirtualGate::VirtualGate(int workers, std::chrono::milliseconds timeout)
    : next_(static_cast<std::size_t>(workers), 0.0), active_(static_cast<std::size_t>(workers), true), timeout_(timeout) {}

void VirtualGate::startEpoch(double t) {
  std::lock_guard lock(mutex_);
  std::fill(next_.begin(), next_.end(), t);
  std::fill(active_.begin(), active_.end(), true);
}

bool VirtualGate::isEarliest(int rank) const {
  const auto me = static_cast<std::size_t>(rank);
  for (std::size_t r = 0; r < next_.size(); ++r)
    if (r != me && active_[r] && (next_[r] < next_[me] || (next_[r] == next_[me] && r < me))) return false;
  return true;
}

double VirtualGate::waitTurn(int rank) {
  std::unique_lock lock(mutex_);
  if (!changed_.wait_for(lock, timeout_, [&] { return aborted_ || isEarliest(rank); }))
    throw TimeoutError("emulated-device async: worker " + std::to_string(rank) + " waited " +
                       std::to_string(timeout_.count()) + " ms for its turn");
  if (aborted_) throw Error("emulated-device async: another worker failed");
  return next_[static_cast<std::size_t>(rank)];
}

void VirtualGate::declare(int rank, double t) {
  {
    std::lock_guard lock(mutex_);
    auto& n = next_[static_cast<std::size_t>(rank)];
    n = std::max(n, t);
  }
  changed_.notify_all();
}

void VirtualGate::finish(int rank) {
  {
    std::lock_guard lock(mutex_);
    active_[static_cast<std::size_t>(rank)] = false;
  }
  changed_.notify_all();
}

double VirtualGate::latest() const {
  std::lock_guard lock(mutex_);
  return *std::max_element(next_.begin(), next_.end());
}

void VirtualGate::abort() {
  {
    std::lock_guard lock(mutex_);
    aborted_ = true;
  }
  changed_.notify_all();
}

}  // namespace cclab::trainer
