#include "collectives/mpi/mpi_links.h"

#include <cstdint>
#include <string>

#include "collectives/core/poll_wait.h"

namespace cclab::mpi {
namespace {

using Clock = std::chrono::steady_clock;
// Busy polling for 50 µs, then yielding the core between polls (collectives/core/poll_wait.h).
constexpr PollBackoff kBackoff{.spin = std::chrono::microseconds(50)};

proc::RemoteLinks::Wait asLinkWait(WaitResult r) {
  using Wait = proc::RemoteLinks::Wait;
  return r == WaitResult::Ready ? Wait::Ready : r == WaitResult::TimedOut ? Wait::TimedOut : Wait::Stopped;
}

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
  auto received = [&] {
    int flag = 0;
    {
      const auto lock = lockMpi();
      check(MPI_Test(&req, &flag, MPI_STATUS_IGNORE), "MPI_Test (receive)");
    }
    if (flag) return true;
    prune();  // keep this rank's own sends moving while it waits
    return false;
  };
  return asLinkWait(boundedPoll(received, stop, deadline, kBackoff));
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
  auto done = [&] {
    prune();
    return !inFlight(begin, bytes, peer);
  };
  return asLinkWait(boundedPoll(done, stop, deadline, kBackoff));
}

}  // namespace cclab::mpi
