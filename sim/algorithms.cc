// The one table of the simulator's algorithm names (algorithms.h).
#include "sim/algorithms.h"

#include <deque>
#include <mutex>
#include <vector>

#include "collectives/core/errors.h"
#include "collectives/plan/algorithm_file.h"

namespace cclab::sim {

namespace {

std::vector<SimAlgorithmInfo> buildTable() {
  using A = plan::Algorithm;
  using S = SimAlgorithm;
  const std::pair<S, A> plain[] = {{S::Ring, A::Ring}, {S::Tree, A::Tree}, {S::FlatTree, A::FlatTree}, {S::DoubleBinaryTree, A::DoubleBinaryTree},
                                   {S::HalvingDoubling, A::HalvingDoubling}, {S::RecursiveDoubling, A::RecursiveDoubling},
                                   {S::Chain, A::Chain}, {S::OneShot, A::OneShot}, {S::TwoShot, A::TwoShot}};
  std::vector<SimAlgorithmInfo> t;
  for (const auto& [s, a] : plain) t.push_back({s, a, false, false, std::string(plan::name(a))});
  t.push_back({S::HierarchicalRing, A::Hierarchical, true, false, "hier-ring"});
  t.push_back({S::HierarchicalTree, A::Tree, true, true, "hier-tree"});
  t.push_back({S::Nvls, A::OneShot, false, true, "nvls"});  // no plan: planAlgorithm is unused
  return t;
}

// The algorithm files of this process (parseSimAlgorithm), never removed, so references stay valid.
std::mutex fileMutex;
std::deque<SimAlgorithmInfo> fileAlgorithms;

}  // namespace

std::span<const SimAlgorithmInfo> simAlgorithms() {
  static const std::vector<SimAlgorithmInfo> table = buildTable();
  return table;
}

const SimAlgorithmInfo& infoOf(SimAlgorithm a) {
  for (const auto& i : simAlgorithms())
    if (i.id == a) return i;
  {
    std::lock_guard lock(fileMutex);
    for (const auto& i : fileAlgorithms)
      if (i.id == a) return i;
  }
  throw InvalidArgument("unknown simulator algorithm " + std::to_string(static_cast<int>(a)));
}

std::string_view name(SimAlgorithm a) { return infoOf(a).name; }

std::string algorithmNames() {
  std::string s;
  for (const auto& i : simAlgorithms()) s += (s.empty() ? "" : ", ") + i.name;
  return s;
}

SimAlgorithm parseSimAlgorithm(std::string_view text) {
  if (text == plan::name(plan::Algorithm::Hierarchical)) return SimAlgorithm::HierarchicalRing;
  if (text.starts_with("file:")) {
    const plan::Algorithm a = plan::parseAlgorithm(text);  // loads the file once per process
    const auto id = static_cast<SimAlgorithm>(static_cast<int>(a));
    std::lock_guard lock(fileMutex);
    for (const auto& i : fileAlgorithms)
      if (i.id == id) return id;
    fileAlgorithms.push_back({id, a, false, false, std::string(plan::name(a)), true});
    return id;
  }
  for (const auto& i : simAlgorithms())
    if (text == i.name) return i.id;
  throw InvalidArgument("--algo '" + std::string(text) + "' is not one of " + algorithmNames() + ", file:PATH");
}

void checkAlgorithm(plan::Collective c, SimAlgorithm a, bool isCluster) {
  const auto& i = infoOf(a);
  if (a == SimAlgorithm::Nvls) {
    if (c != plan::Collective::AllReduce) throw InvalidArgument("--algo nvls exists for allreduce only");
    return;
  }
  if (i.hierarchical) {
    if (c != plan::Collective::AllReduce) throw InvalidArgument("--algo " + i.name + " exists for allreduce only");
    if (!isCluster) throw InvalidArgument("--algo " + i.name + " needs a cluster topology");
    if (i.analyticOnly) return;
  }
  if (!plan::hasGenerator(c, i.planAlgorithm))
    throw InvalidArgument("--algo " + i.name + " has no plan for " + std::string(plan::name(c)));
}

}  // namespace cclab::sim
