// Flow-level link sharing; the model is described in flow_network.h.
#include "sim/flow_network.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace cclab::sim {

FlowNetwork::FlowNetwork(std::vector<MicrosPerByte> beta, const std::vector<int>& routes, LinkSharing sharing,
                         FlowSchedule schedule)
    : beta_(std::move(beta)), routes_(&routes), on_(beta_.size()), sharing_(sharing), schedule_(schedule) {}

MicrosPerByte FlowNetwork::equalShareTpb(const Flow& f) const {
  MicrosPerByte tpb = 0;
  for (const int h : route(f))
    if (beta_[static_cast<std::size_t>(h)] > 0)
      tpb = std::max(tpb, beta_[static_cast<std::size_t>(h)] * static_cast<double>(on_[static_cast<std::size_t>(h)].size()));
  return tpb;
}

void FlowNetwork::push(int id) {
  const Flow& f = flows_[static_cast<std::size_t>(id)];
  if (schedule_ == FlowSchedule::Own)
    due_.push({f.end, id, f.version});
  else
    changed_.push_back(id);
}

void FlowNetwork::start(int id, int begin, int end, double volume, Micros t) {
  if (static_cast<std::size_t>(id) >= flows_.size()) {
    flows_.resize(static_cast<std::size_t>(id) + 1);
    stamp_.resize(flows_.size(), 0);
  }
  if (t < clock_) throw std::logic_error("FlowNetwork: a flow starts at " + std::to_string(t) + ", before " + std::to_string(clock_));
  clock_ = t;
  Flow& f = flows_[static_cast<std::size_t>(id)];
  f.begin = begin;
  f.end_ = end;
  const std::span<const int> path = route(f);
  f.active = true;
  ++active_;
  ++f.version;
  bool limited = false;
  for (const int h : path) limited = limited || beta_[static_cast<std::size_t>(h)] > 0;
  if (volume <= 0 || !limited) {  // nothing to share: it ends now and touches no resource
    f.end_ = f.begin;
    f.tpb = 0;
    f.end = t;
    push(id);
    return;
  }
  bool alone = true;  // no other flow on any of its resources: nobody to re-rate
  for (const int h : path)
    if (beta_[static_cast<std::size_t>(h)] > 0) {
      auto& list = on_[static_cast<std::size_t>(h)];
      alone = alone && list.empty();
      list.push_back(id);
    }
  if (sharing_ == LinkSharing::EqualShare) {
    f.tpb = equalShareTpb(f);
    f.end = t + volume * f.tpb;
    push(id);
    if (alone) return;
    stamp_[static_cast<std::size_t>(id)] = round_ + 1;  // its rate is set: updateShared skips it
    updateShared(f, t);  // the others on its resources now share with one more
  } else {
    f.tpb = std::numeric_limits<double>::infinity();  // a placeholder the solve replaces: remaining = volume
    f.end = t + volume;  // (end - t) / tpb is not used for a new flow; see rateChanged
    remainingNew_ = volume;
    newId_ = id;
    solveMaxMin(t);
    newId_ = -1;
  }
}

void FlowNetwork::rateChanged(int id, MicrosPerByte tpb, Micros t) {
  Flow& f = flows_[static_cast<std::size_t>(id)];
  if (id != newId_ && tpb == f.tpb) return;
  const double remaining = id == newId_ ? remainingNew_ : (f.tpb > 0 ? std::max(0.0, f.end - t) / f.tpb : 0.0);
  f.tpb = tpb;
  f.end = t + remaining * tpb;
  ++f.version;
  push(id);
}

void FlowNetwork::updateShared(const Flow& f, Micros t) {
  ++round_;
  for (const int h : route(f)) {
    if (beta_[static_cast<std::size_t>(h)] <= 0) continue;
    for (const int g : on_[static_cast<std::size_t>(h)]) {
      if (stamp_[static_cast<std::size_t>(g)] == round_) continue;
      stamp_[static_cast<std::size_t>(g)] = round_;
      rateChanged(g, equalShareTpb(flows_[static_cast<std::size_t>(g)]), t);
    }
  }
}

// Progressive filling: raise every unfixed flow's rate together; the resource whose remaining
// bandwidth per unfixed flow is least saturates first and fixes its flows at that share; repeat.
void FlowNetwork::solveMaxMin(Micros t) {
  busy_.clear();
  for (std::size_t h = 0; h < on_.size(); ++h)
    if (!on_[h].empty()) busy_.push_back(static_cast<int>(h));
  left_.assign(on_.size(), 0.0);
  unfixed_.assign(on_.size(), 0);
  for (const int h : busy_) {
    left_[static_cast<std::size_t>(h)] = 1.0 / beta_[static_cast<std::size_t>(h)];
    unfixed_[static_cast<std::size_t>(h)] = static_cast<int>(on_[static_cast<std::size_t>(h)].size());
  }
  ++round_;
  for (;;) {
    int best = -1;
    double share = std::numeric_limits<double>::infinity();
    for (const int h : busy_) {
      const int u = unfixed_[static_cast<std::size_t>(h)];
      if (u > 0 && left_[static_cast<std::size_t>(h)] / u < share) {
        share = left_[static_cast<std::size_t>(h)] / u;
        best = h;
      }
    }
    if (best < 0) break;
    share = std::max(share, 1e-12 / beta_[static_cast<std::size_t>(best)]);  // rounding never stops a flow
    for (const int g : on_[static_cast<std::size_t>(best)]) {
      if (stamp_[static_cast<std::size_t>(g)] == round_) continue;
      stamp_[static_cast<std::size_t>(g)] = round_;
      for (const int k : route(flows_[static_cast<std::size_t>(g)]))
        if (beta_[static_cast<std::size_t>(k)] > 0) {
          left_[static_cast<std::size_t>(k)] = std::max(0.0, left_[static_cast<std::size_t>(k)] - share);
          --unfixed_[static_cast<std::size_t>(k)];
        }
      rateChanged(g, 1.0 / share, t);
    }
  }
}

Micros FlowNetwork::next() {
  while (!due_.empty()) {
    const Due& d = due_.top();
    const Flow& f = flows_[static_cast<std::size_t>(d.id)];
    if (f.active && f.version == d.version) return d.end;
    due_.pop();  // stale: the flow's rate changed or it ended
  }
  return std::numeric_limits<Micros>::infinity();
}

int FlowNetwork::finishNext(Micros t, Micros& when) {
  if (next() > t) return -1;
  const Due d = due_.top();
  due_.pop();
  when = d.end;
  finish(d.id);
  return d.id;
}

void FlowNetwork::finish(int id) {
  Flow& f = flows_[static_cast<std::size_t>(id)];
  f.active = false;
  ++f.version;
  --active_;
  const Micros when = f.end;
  clock_ = std::max(clock_, when);
  bool shared = false;  // another flow stays on one of its resources
  for (const int h : route(f)) {
    if (beta_[static_cast<std::size_t>(h)] <= 0) continue;
    auto& list = on_[static_cast<std::size_t>(h)];
    const auto it = std::find(list.begin(), list.end(), id);
    if (it != list.end()) {
      *it = list.back();
      list.pop_back();
    }
    shared = shared || !list.empty();
  }
  if (f.end_ > f.begin && (shared || sharing_ == LinkSharing::MaxMin)) {
    if (sharing_ == LinkSharing::EqualShare)
      updateShared(f, when);  // the others on its resources share with one fewer
    else
      solveMaxMin(when);
  }
}

double FlowNetwork::rate(int id) const {
  const Flow& f = flows_[static_cast<std::size_t>(id)];
  if (!f.active) return 0;
  return f.tpb > 0 ? 1.0 / f.tpb : std::numeric_limits<double>::infinity();
}

}  // namespace cclab::sim
