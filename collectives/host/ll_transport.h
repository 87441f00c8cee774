// The LL transport of the executor core (collectives/plan/plan_runner.h), written once for the host's
// LL path (threads: ll_executor.cc, ll_multi_run.cc) and the process backend's (shm_ll.cc). A send
// copies the message into the ring of an LlLink (collectives/core/ll_ring.h) to its peer, waiting only
// for room; a receive waits for the message's last unit in the ring from its peer (then the whole
// message is there), copies it out and publishes the new tail. Ops run whole.
//
// What differs between the paths is the parameter `Place` (the derived class, CRTP), with `Word` the
// futex word of its links (private for threads, shared for processes):
//   std::byte* address(const plan::Range&, std::int64_t lo)   where element lo of a range lies
//   LlLink<Word>& to(const plan::Op&)                           the link to op.peer (op's channel)
//   LlLink<Word>& from(const plan::Op&, int peer)               the link from peer
//   template <class Ready> bool await(Ready&, Word&, int peer, const char* what)
//       ready() failed: wait (bounded) until it holds and return true, or throw; or, for a caller that
//       runs several ranks on one thread (kWaits false), record what the rank waits for and return false
//   void receiving(LlLink<Word>&, std::size_t bytes)            before a receive's first check (a hint)
//   std::string where() const                                   "<path>: rank r", for errors
// The links a rank wrote to and read from are kept (sent, read) for flushWakes: a waiter that went to
// sleep on them is woken once, at the rank's next wait or at the end of its call.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "collectives/core/errors.h"
#include "collectives/core/futex.h"
#include "collectives/core/ll_ring.h"
#include "collectives/plan/plan_runner.h"

namespace cclab::host {

// Whether the lines one call of the (valid) `plan` sends on every link, with elements of `elemSize`
// bytes, fit in a ring of `ringLines`: a link per (channel, from, to), or per (from, to) when the
// plan's channels share one ring per pair (`perChannel` false). Then no call waits on a full ring
// for a message of its own call, only for the reader to finish an earlier one.
inline bool llPlanFits(const plan::Plan& plan, std::size_t elemSize, std::int64_t ringLines, bool perChannel) {
  std::map<std::tuple<int, int, int>, std::int64_t> lines;  // (channel or 0, from, to) -> lines one call sends
  for (int r = 0; r < plan.nranks; ++r)
    for (const plan::Op& op : plan.ranks[static_cast<std::size_t>(r)]) {
      if (op.kind != plan::OpKind::Send) continue;
      auto& n = lines[{perChannel ? op.channel : 0, r, op.peer}];
      n += llLinesFor(static_cast<std::size_t>(op.count()) * elemSize);
      if (n > ringLines) return false;
    }
  return true;
}

template <class Place, class Word>
class LlTransport : public plan::WaitingTransport {
 public:
  using Link = LlLink<Word>;
  LlTransport(std::vector<Link*>& sent, std::vector<Link*>& read, std::vector<std::byte>& staging, int nranks, int rank)
      : sent_(sent), read_(read), staging_(staging), nranks_(nranks), rank_(rank) {}

  bool trySend(Lane& lane, const plan::Op& op, const std::byte* src, std::size_t bytes) {
    opIndex_ = lane.opIndex();
    return send(place().to(op), op.peer, src, bytes);
  }
  // A receive of a slice already read stays in its staging slot until release (kWaits false: the
  // runner asks again for every receive of a ReduceAll until all are there).
  const std::byte* tryReceive(Lane& lane, const plan::Op& op, int peer, std::byte* into, std::size_t bytes, int index) {
    opIndex_ = lane.opIndex();
    std::byte* in = into ? into : plan::stagingSlot(staging_, op, nranks_, index, bytes);
    if constexpr (Place::kWaits) {
      return receive(place().from(op, peer), peer, in, bytes);
    } else {
      const auto i = static_cast<std::size_t>(index);
      if (have_.size() <= i) have_.resize(i + 1, nullptr);
      if (!have_[i]) have_[i] = receive(place().from(op, peer), peer, in, bytes);
      return have_[i];
    }
  }
  void release(Lane&, const plan::Op& op, int peer) {
    if constexpr (!Place::kWaits) have_[static_cast<std::size_t>(plan::receiveIndex(op, peer, rank_))] = nullptr;
  }

  // Wakes the peers asleep on what this rank sent or read (llFlushWakes), and forgets them.
  void flushWakes() { llFlushWakes(sent_, read_); }

 protected:
  // Checks of a word before a wait first reads the clock (~30 ns a read, about a line transfer) or
  // wakes a peer: a peer sleeps only after spinning and yielding for milliseconds, and these take a
  // few µs, after which the wait flushes the wakes.
  static constexpr int kChecksBeforeClock = 256;

  // Writes the message to `link` once there is room; false when await gave up (kWaits false).
  bool send(Link& link, int peer, const std::byte* src, std::size_t bytes) {
    if (llUnitsFor(bytes) > link.ring().ringUnits())  // could never fit: refuse rather than wait out the timeout
      throw InvalidArgument(place().where() + ": an LL message of " + std::to_string(bytes) + " bytes exceeds the ring");
    if (!link.hasRoom(bytes)) {
      auto room = [&] { return link.hasRoom(bytes); };
      if (!place().await(room, link.acked(), peer, "room in its ring to")) return false;
    }
    link.write(src, bytes);
    sent_.push_back(&link);
    return true;
  }

  // Reads the next message from `link` (from `peer`, of `bytes`) into `in`; nullptr when await gave up.
  std::byte* receive(Link& link, int peer, std::byte* in, std::size_t bytes) {
    place().receiving(link, bytes);
    if (!link.tryRead(in, bytes)) {
      auto ready = [&] { return link.messageReady(bytes); };
      if (!place().await(ready, link.bell(), peer, "data from")) return nullptr;
      if (!link.tryRead(in, bytes))
        throw Error(place().where() + ": LL message from rank " + std::to_string(peer) + " incomplete");
    }
    read_.push_back(&link);
    return in;
  }

  // The start of every wait: up to kChecksBeforeClock checks of ready() where waits spin at all
  // (true: ready), then the wakes this rank owes (a peer asleep on what it sent must not sleep through
  // this wait); false: the wait goes on.
  template <class Ready>
  bool readyBeforeClock(Ready& ready, bool spins) {
    for (int i = 0; spins && i < kChecksBeforeClock; ++i) {
      if (ready()) return true;
      cpuRelax();
    }
    flushWakes();
    return false;
  }

  std::size_t opIndex_ = 0;  // the op of the current try, for error lines

 private:
  Place& place() { return static_cast<Place&>(*this); }

  std::vector<Link*>& sent_;  // links whose waiters may need a wake-up
  std::vector<Link*>& read_;
  std::vector<std::byte>& staging_;  // received messages
  int nranks_;
  int rank_;
  std::vector<std::byte*> have_;  // kWaits false: per receive of the current slice, where it was read to
};

}  // namespace cclab::host
