// Flow-level sharing of link bandwidth for the replay (docs/sim.md, "Link model").
//
// A flow is one message on its way: a volume of bytes over a route of resources (link directions and
// node capacities, topology.h). Every resource is independent; the flows crossing one share its
// bandwidth, and a flow's rate is set by its route's most shared resource. Nothing is reserved ahead:
// a flow that ends frees its share at once for the others, so no capacity idles while a flow waits.
//
// Two sharing rules:
//  - EqualShare (the replay's default): a flow crossing resources h with n_h flows each moves at
//    min_h bandwidth_h / n_h. A start or an end changes only the rates of the flows that share a
//    resource with it, so one event costs O(flows on its route's resources), whatever the network's
//    size. It never gives a resource more than its bandwidth (n_h flows at most bandwidth_h / n_h
//    each), and it equals max-min fairness whenever the flows sharing a resource have that resource
//    as their bottleneck (every ring, tree and hier pattern on the presets); where a flow is held back
//    elsewhere it leaves its unused share idle (max-min would hand it to the others).
//  - MaxMin: max-min fairness by progressive filling (the flow model SimGrid validated, its LMM
//    solver), recomputed over all active flows at every start and end: O(active flows x route length
//    x bottleneck levels) per event. The reference EqualShare is measured against.
#pragma once

#include <cstdint>
#include <queue>
#include <span>
#include <vector>

#include "sim/units.h"

namespace cclab::sim {

enum class LinkSharing : std::uint8_t { EqualShare, MaxMin };

// Who keeps the flows' end times in order: the network (next, finishNext), or its caller, which reads
// changed() after each start or finish, queues those flows at end(id) in its own event queue, and
// calls finish(id) for an entry that is still due (due(id, t)): one queue for agents and flows.
enum class FlowSchedule : std::uint8_t { Own, Caller };

class FlowNetwork {
 public:
  // beta: per resource, its inverse bandwidth (µs per byte; 0 = unlimited, not shared). routes: the
  // caller's store of routes (resource ids), which may grow while flows run. Flow ids are 0, 1, ...
  // (a caller's connection ids); each id has at most one flow at a time.
  FlowNetwork(std::vector<MicrosPerByte> beta, const std::vector<int>& routes, LinkSharing sharing,
              FlowSchedule schedule = FlowSchedule::Own);

  // Starts flow `id` of `volume` bytes at time t over the route routes[begin, end). A flow with no
  // limited resource, or no bytes, ends at t.
  void start(int id, int begin, int end, double volume, Micros t);
  // FlowSchedule::Own: when the next flow ends (infinity when none is active); ends the next flow if
  // it ends at or before t (returns its id and sets `when`; -1 otherwise).
  [[nodiscard]] Micros next();
  int finishNext(Micros t, Micros& when);
  // FlowSchedule::Caller: the flows whose end changed since the caller last cleared the list; whether
  // flow id is active and ends at t; ends it (at end(id)).
  [[nodiscard]] std::vector<int>& changed() { return changed_; }
  [[nodiscard]] bool due(int id, Micros t) const {
    const Flow& f = flows_[static_cast<std::size_t>(id)];
    return f.active && f.end == t;
  }
  [[nodiscard]] Micros end(int id) const { return flows_[static_cast<std::size_t>(id)].end; }
  void finish(int id);
  // Flows started and not yet ended.
  [[nodiscard]] int active() const { return active_; }
  // A flow's current rate in bytes per µs (0 when not active; infinity when it crosses nothing limited).
  [[nodiscard]] double rate(int id) const;

 private:
  struct Flow {
    int begin = 0, end_ = 0;  // its route in routes_ (empty: it touches no limited resource)
    Micros end = 0;       // when it ends at its current rate
    MicrosPerByte tpb = 0;  // µs per byte at its current rate (1 / rate)
    std::uint32_t version = 0;
    bool active = false;
  };
  [[nodiscard]] std::span<const int> route(const Flow& f) const {
    return {routes_->data() + f.begin, static_cast<std::size_t>(f.end_ - f.begin)};
  }
  void rateChanged(int id, MicrosPerByte tpb, Micros t);
  void updateShared(const Flow& f, Micros t);  // EqualShare: flows sharing the route
  void solveMaxMin(Micros t);
  [[nodiscard]] MicrosPerByte equalShareTpb(const Flow& f) const;
  void push(int id);

  std::vector<MicrosPerByte> beta_;
  const std::vector<int>* routes_;
  std::vector<std::vector<int>> on_;  // per resource: the active flows crossing it
  std::vector<Flow> flows_;
  LinkSharing sharing_;
  FlowSchedule schedule_;
  std::vector<int> changed_;
  Micros clock_ = 0;  // the latest start or end: time never goes back
  int active_ = 0;
  std::vector<std::uint32_t> stamp_;  // per flow: last update round that saw it (dedup)
  std::uint32_t round_ = 0;
  struct Due {
    Micros end;
    int id;
    std::uint32_t version;
    bool operator>(const Due& o) const { return end != o.end ? end > o.end : id > o.id; }
  };
  std::priority_queue<Due, std::vector<Due>, std::greater<>> due_;
  // MaxMin scratch
  std::vector<int> busy_;  // resources with active flows
  std::vector<double> left_;
  std::vector<int> unfixed_;
  int newId_ = -1;             // MaxMin: the flow being started (its rate is set for the first time)
  double remainingNew_ = 0;    // its volume
};

}  // namespace cclab::sim
