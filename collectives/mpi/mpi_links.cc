#include "collectives/mpi/mpi_links.h"

#include <sched.h>

#include <cstdint>
#include <string>

#include "collectives/core/pause_clock.h"

namespace cclab::mpi {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kSpin = std::chrono::microseconds(50);  // then yield the core between polls

}  // namespace

long long MpiLinks::maxTag(int ranksPerProcess) {
  const long long k = ranksPerProcess;
  return plan::kMaxChannels * k * k - 1;
}

bool MpiLinks::prune() {
  if (sends_.empty()) return false;
  const auto lock = lockMpi();
  const std::size_t before = sends_.size();
  std::erase_if(sends_, [](Send& s) {
    int flag = 0;
    check(MPI_Test(&s.request, &flag, MPI_STATUS_IGNORE), "MPI_Test (send)");
    return flag != 0;
  });
  return sends_.size() != before;
}

bool MpiLinks::progress() {
  prune();
  return !sends_.empty();
}

void MpiLinks::send(int peer, int channel, const std::byte* src, std::size_t bytes) {
  MPI_Request req = MPI_REQUEST_NULL;
  {
    const auto lock = lockMpi();
    check(MPI_Isend(src, messageBytes(bytes), MPI_BYTE, peer / k_, tag(channel, local_, peer % k_), world_.comm(), &req), "MPI_Isend");
  }
  sends_.push_back({src, src + bytes, req, peer});
  ++messages_;
  if (sends_.size() > 64) prune();
}

proc::RemoteLinks::Wait MpiLinks::receive(int peer, int channel, std::byte* dst, std::size_t bytes, Clock::time_point deadline,
                                          const std::function<bool()>& stop) {
  MPI_Request req = MPI_REQUEST_NULL;
  {
    const auto lock = lockMpi();
    check(MPI_Irecv(dst, messageBytes(bytes), MPI_BYTE, peer / k_, tag(channel, peer % k_, local_), world_.comm(), &req), "MPI_Irecv");
  }
  const auto start = Clock::now();
  PauseClock clock(start);  // the deadline counts only time this rank ran (pause_clock.h)
  for (;;) {
    int flag = 0;
    {
      const auto lock = lockMpi();
      check(MPI_Test(&req, &flag, MPI_STATUS_IGNORE), "MPI_Test (receive)");
    }
    if (flag) return Wait::Ready;
    prune();  // keep this rank's own sends moving while it waits
    const auto now = clock.now();
    if (stop()) return Wait::Stopped;
    if (now >= deadline) return Wait::TimedOut;
    if (now - start > kSpin) sched_yield();
  }
}

bool MpiLinks::inFlight(const std::byte* begin, std::size_t bytes, int& peer) const {
  for (const Send& s : sends_)
    if (bytes == SIZE_MAX || (s.begin < begin + bytes && begin < s.end)) {
      peer = s.peer;
      return true;
    }
  return false;
}

proc::RemoteLinks::Wait MpiLinks::sent(const std::byte* begin, std::size_t bytes, Clock::time_point deadline,
                                       const std::function<bool()>& stop, int& peer) {
  const auto start = Clock::now();
  PauseClock clock(start);
  for (;;) {
    prune();
    if (!inFlight(begin, bytes, peer)) return Wait::Ready;
    const auto now = clock.now();
    if (stop()) return Wait::Stopped;
    if (now >= deadline) return Wait::TimedOut;
    if (now - start > kSpin) sched_yield();
  }
}

}  // namespace cclab::mpi
