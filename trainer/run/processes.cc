#include "trainer/run/processes.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>

#include "collectives/core/errors.h"

namespace cclab::trainer {

ProcessGroup::ProcessGroup(Communicator& comm, std::chrono::milliseconds timeout)
    : comm_(comm), local_(comm.localRanks()) {
  options_.timeout = timeout;
  const auto n = static_cast<std::size_t>(comm.nranks());
  spans_ = local_.size() < n;
  if (spans_ && local_.size() != 1)
    throw InvalidArgument("the trainer runs one rank per process or every rank in one process, not " +
                          std::to_string(local_.size()) + " of " + std::to_string(n));
}

std::vector<std::vector<std::byte>> ProcessGroup::allGather(std::span<const std::byte> mine) const {
  if (!spans_) return {std::vector<std::byte>(mine.begin(), mine.end())};
  const int rank = local_.front();
  const auto n = static_cast<std::size_t>(comm_.nranks());
  // First every process's size, then every process's bytes padded to the largest.
  const std::uint64_t size = mine.size();
  std::vector<std::uint64_t> sizes(n);
  comm_.allGather(rank, &size, sizes.data(), sizeof size, DataType::UInt8, options_);
  const std::uint64_t most = *std::max_element(sizes.begin(), sizes.end());
  std::vector<std::vector<std::byte>> out(n);
  if (most == 0) return out;
  std::vector<std::byte> padded(most);
  std::copy(mine.begin(), mine.end(), padded.begin());
  std::vector<std::byte> all(most * n);
  comm_.allGather(rank, padded.data(), all.data(), static_cast<std::int64_t>(most), DataType::UInt8, options_);
  for (std::size_t r = 0; r < n; ++r) {
    const auto* begin = all.data() + r * most;
    out[r].assign(begin, begin + sizes[r]);
  }
  return out;
}

RunClock ProcessGroup::commonClock() const {
  if (!spans_) return RunClock();
  struct Stamp {
    std::array<char, 256> host;
    std::int64_t nowNs;
  };
  Stamp mine{};
  gethostname(mine.host.data(), mine.host.size() - 1);
  mine.nowNs = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
  const std::vector<Stamp> all = concat(std::span<const Stamp>(&mine, 1));
  const bool oneHost = std::all_of(all.begin(), all.end(), [&](const Stamp& s) { return s.host == all.front().host; });
  if (!oneHost) return RunClock();
  return RunClock(Clock::time_point(std::chrono::duration_cast<Clock::duration>(std::chrono::nanoseconds(all.front().nowNs))));
}

}  // namespace cclab::trainer
