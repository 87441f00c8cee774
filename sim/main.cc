// cclab-sim: predicts collectives with the analytic model or by replaying the plan on a topology.
//
//   cclab-sim allreduce --topo dgx-h100 --algo ring -b 8 -e 1G -f 2 [--protocol auto|ll|simple] [-J out.json] [--trace t.json]
//   cclab-sim scale --topo cluster --nodes 1..128 --gpus 8
//   cclab-sim straggler --topo dgx-h100 --rank 3 --slowdown 2
//   cclab-sim calibrate --measured host_g2.json --check host_g4.json --topo host -o calibrated.json
//   cclab-sim topo dgx-h100 [-o file.json] [--describe]
//   cclab-sim bench --ranks 1024 --size 64M          (the simulator's own speed)
// Only wiring: every model function it calls lives in sim/ and has tests. One catch in main: bad
// usage and bad files print one line and exit 2, failures while running exit 1 (exitCodeFor).
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "collectives/conventions/limits.h"
#include "collectives/conventions/output_file.h"
#include "collectives/core/errors.h"
#include "collectives/core/input_file.h"
#include "sim/algorithms.h"
#include "sim/plan_command.h"
#include "sim/nccl_compare.h"
#include "sim/analytic.h"
#include "sim/calibrate.h"
#include "sim/compare.h"
#include "sim/cli_values.h"
#include "sim/cross_validate.h"
#include "sim/crossover.h"
#include "sim/effective_params.h"
#include "sim/measured.h"
#include "sim/nccl_tests_log.h"
#include "sim/nccl_topology.h"
#include "sim/predictor.h"
#include "sim/presets.h"
#include "sim/replay.h"
#include "sim/replay_work.h"
#include "sim/report.h"
#include "collectives/core/dtype.h"
#include "sim/topology_json.h"

namespace {

using namespace cclab;
using namespace cclab::sim;
using plan::Algorithm;
using plan::Collective;

// Options every prediction command shares.
// An output path given empty is refused (it used to mean "not given" and write nothing).
const CLI::Validator nonEmptyPath([](const std::string& s) { return s.empty() ? std::string("an empty path (give a file name)") : std::string(); },
                                  "PATH");
// -o names a reduction op every backend knows (sum, prod, max, min, avg), not any text.
const CLI::Validator knownReduceOp(
    [](const std::string& s) {
      try {
        (void)cclab::parseReduceOp(s);
        return std::string();
      } catch (const std::exception& e) {
        return std::string(e.what());
      }
    },
    "OP");

struct Common {
  std::string topo = "dgx-h100";
  int nranks = 0, nodes = 0, gpus = 0;
  std::string type = "float", redop = "sum";
  Model model = Model::Replay;
  std::string slice = "auto";
  int root = 0;
  int channels = 0;  // 0: the topology's (Topology::channels)
  ProtocolChoice protocol = ProtocolChoice::Auto;
  std::string json;

  void add(CLI::App* app, bool withModel = true) {
    app->add_option("--topo,-t", topo, "preset (dgx-h100, dgx-h200, dgx-a100, pcie, cluster, cluster-4nic, cluster-a100, host) or topology file")->capture_default_str();
    app->add_option("-g,--nranks", nranks, "ranks (default: the topology's)")->check(CLI::Range(1, kMaxTopologyRanks));
    app->add_option("--nodes", nodes, "cluster: nodes")->check(CLI::Range(1, kMaxTopologyRanks));
    app->add_option("--gpus", gpus, "cluster: GPUs per node")->check(CLI::Range(1, kMaxTopologyRanks));
    app->add_option("-d,--datatype", type, "element type")->capture_default_str();
    app->add_option("-o,--op", redop, "reduction op (names the column; the model charges every op alike)")
        ->capture_default_str()
        ->check(knownReduceOp);
    app->add_option("-r,--root", root, "root of broadcast and reduce")->capture_default_str();
    if (withModel)
      app->add_option_function<std::string>("--model", [this](const std::string& m) { model = parseModel(m); },
                                            "replay or analytic (default replay; scale: analytic)");
    app->add_option("--slice", slice, "slice size in bytes (K/M/G), 'auto' or 'whole'")->capture_default_str();
    app->add_option("--channels", channels,
                    "channels per plan (default: the topology's; cluster: one per GPU of a node, else 1)")
        ->check(CLI::Range(1, plan::kMaxChannels));
    app->add_option_function<std::string>("--protocol", [this](const std::string& p) { protocol = parseProtocolChoice(p); },
                                          "ll, ll128, simple or auto (default: auto, the fastest for the whole call; "
                                          "every message of a call takes one)");
    app->add_option("-J,--json", json, "write JSON results to this file")->check(nonEmptyPath);
  }

  TopologySpec spec() const {
    // NCCL topology dumps: --nodes copies of one file (or one per listed file), then -g/--gpus as any.
    if (auto x = resolveNcclTopology(topo, nodes)) return resized(std::move(*x), nranks, 0, gpus);
    TopologySpec s = resolveTopology(topo);
    return resized(std::move(s), nranks, nodes, gpus);
  }
  std::int64_t elemSize() const {
    try {
      return elemSizeOf(type);
    } catch (const std::exception&) {
      throw InvalidArgument("-d/--datatype '" + type + "' is not a known type");
    }
  }
  std::int64_t sliceBytes() const {
    if (slice == "auto") return kAutoSlice;
    if (slice == "whole") return kWholeOps;
    const Bytes b = parseBytes(slice);
    if (b <= 0) throw InvalidArgument("--slice must be > 0 bytes, 'auto' or 'whole'");
    return b;
  }
};

std::int64_t apiCount(Collective c, int p, Bytes size, std::int64_t e) {
  const std::int64_t elems = size / e;
  return (c == Collective::AllGather || c == Collective::ReduceScatter) ? elems / p : elems;
}

void writeJson(const std::string& path, const nlohmann::json& j) {
  conventions::writeFileAtomically(path, j.dump(2) + "\n");
}
// Output paths are checked before the work starts (a bad -J fails at once, not after the sweep).
void checkOutput(const std::string& path, std::string_view flag) {
  if (!path.empty()) conventions::checkWritable(path, flag);
}

// ---- collective commands ----
struct CollectiveCmd {
  Common common;
  std::string algo = "ring";
  std::string minBytes = "8", maxBytes = "128M", increment = "0";
  std::string factor = "2";
  std::string trace;
  bool links = false;
};

// --algo nccl: NCCL's pick per size (its tuner's model, nccl_tuner.h) and our prediction of that pick.
int runNcclComparison(Collective c, const CollectiveCmd& cmd, const Topology& topo, const std::vector<Bytes>& sizes) {
  const int p = topo.nranks();
  const std::int64_t e = cmd.common.elemSize();
  const Predictor predict{.topo = topo, .model = cmd.common.model, .sliceBytes = cmd.common.sliceBytes(), .elemSize = e,
                          .root = cmd.common.root, .channels = cmd.common.channels};
  const NcclGraph g = ncclGraphOf(topo, p);
  std::cout << fmt::format("# cclab-sim: {} on {} ({} ranks, {} node(s)): NCCL's tuner model (its latency and bandwidth tables,\n"
                           "# src/graph/tuning.cc; graph: {} channels of {:.1f} GB/s) against our {} of the same algorithm and protocol (nvls: analytic)\n",
                           plan::name(c), topo.spec().name, p, g.nodes, g.channels, g.nodes <= 2 ? g.bwIntra : g.bwInter,
                           name(cmd.common.model));
  std::cout << fmt::format("# {:>10} {:>10} {:>7} {:>12} {:>12} {:>12} {:>8} {:>7}\n", "size", "nccl algo", "proto", "nccl us",
                           "ours us", "ours algo", "ours/nccl", "busbw");
  nlohmann::json rows = nlohmann::json::array();
  for (const NcclComparison& r : compareWithNccl(predict, c, p, e, sizes)) {
    const std::string ours = r.ours ? fmt::format("{:.2f}", r.ours->time) : "-";
    const std::string ratio = r.ours ? fmt::format("{:.2f}", r.ours->time / r.nccl.time) : "-";
    const double busbw = r.ours ? makeRow(c, p, r.size, e, r.ours->time).busbw : 0.0;
    std::cout << fmt::format("  {:>10} {:>10} {:>7} {:>12.2f} {:>12} {:>12} {:>8} {:>7.2f}\n", r.size, name(r.nccl.algorithm),
                             name(r.nccl.protocol), r.nccl.time, ours, r.ours ? r.ourAlgorithm : "-", ratio, busbw);
    nlohmann::json row = {{"size", r.size}, {"nccl_algo", name(r.nccl.algorithm)}, {"nccl_protocol", name(r.nccl.protocol)},
                          {"nccl_time_us", r.nccl.time}, {"nccl_latency_us", r.nccl.latency},
                          {"nccl_algbw", r.nccl.algBandwidth}};
    if (r.ours) {
      row["ours_algo"] = r.ourAlgorithm;
      row["ours_time_us"] = r.ours->time;
      row["ours_protocol"] = name(r.ours->protocol);
    }
    rows.push_back(row);
  }
  if (!cmd.common.json.empty())
    writeJson(cmd.common.json, {{"command", "nccl"}, {"collective", plan::name(c)}, {"topology", topo.spec().name}, {"nranks", p},
                                {"nodes", g.nodes}, {"channels", g.channels}, {"model", name(cmd.common.model)}, {"rows", rows}});
  return 0;
}

int runCollective(Collective c, const CollectiveCmd& cmd) {
  checkOutput(cmd.common.json, "-J");
  checkOutput(cmd.trace, "--trace");
  conventions::checkDistinctOutputs({{"-J", cmd.common.json}, {"--trace", cmd.trace}});
  const TopologySpec spec = cmd.common.spec();
  const Topology topo(spec);
  const int p = topo.nranks();
  const std::int64_t e = cmd.common.elemSize();
  const bool rooted = plan::isRooted(c);
  if (rooted && (cmd.common.root < 0 || cmd.common.root >= p)) throw InvalidArgument("-r/--root must be a rank in 0.." + std::to_string(p - 1));
  const auto sizes = sizeSweep(cmd.minBytes, cmd.maxBytes, cmd.factor, cmd.increment);
  nlohmann::json all = nlohmann::json::array();
  if (cmd.algo == "nccl") return runNcclComparison(c, cmd, topo, sizes);
  std::vector<SimAlgorithm> algos;
  for (const auto& text : splitList(cmd.algo)) {
    algos.push_back(parseSimAlgorithm(text));
    checkAlgorithm(c, algos.back(), spec.kind == TopologyKind::Cluster);
  }
  Predictor predict{.topo = topo, .model = cmd.common.model, .sliceBytes = cmd.common.sliceBytes(), .elemSize = e,
                    .root = cmd.common.root, .channels = cmd.common.channels, .protocol = cmd.common.protocol};
  // --trace records the replay of the largest size only (the one written), bounded before any replay.
  if (!cmd.trace.empty())
    for (const SimAlgorithm algo : algos)
      conventions::requireAtMost(predict.traceEventBound(c, algo, p, apiCount(c, p, sizes.back(), e)), conventions::kMaxTraceEvents,
                                 fmt::format("--trace: the events of the {} {} replay on {} ranks (at most 2 per op-slice)",
                                             humanBytes(sizes.back()), name(algo), p),
                                 "a Chrome trace viewer opens a few million; trace a smaller -e, fewer ranks or a larger --slice");
  for (const SimAlgorithm algo : algos) {
    const Model model = predict.modelFor(algo);
    PredictedRun run;
    run.collective = c;
    run.algo = ranAlgorithmName(c, algo);  // broadcast/reduce: dbtree runs (and is reported) as tree
    run.nranks = p;
    run.type = cmd.common.type;
    run.redop = cmd.common.redop;
    run.root = rooted ? cmd.common.root : -1;
    run.topology = spec.name;
    run.model = name(model);
    run.sliceBytes = predict.sliceBytes;
    run.protocol = cmd.common.protocol;
    ReplayResult last;
    for (Bytes size : sizes) {
      const std::int64_t count = apiCount(c, p, size, e);
      predict.replayOptions.trace = !cmd.trace.empty() && size == sizes.back();
      const Prediction t = predict.predict(c, algo, p, count, &last);
      run.rows.push_back(makeRow(c, p, size, e, t.time));
      run.rows.back().protocol = t.protocol;
    }
    if (model == Model::Replay)
      std::cout << fmt::format("# plan shape: {} channel(s), {} ranks per node\n", predict.shape().channels,
                               predict.shape().ranksPerNode);
    std::cout << formatTable(run);
    if (cmd.links && model == Model::Replay && last.time > 0) {
      std::cout << fmt::format("# link utilisation at {} (busy time / total time, top 10)\n", humanBytes(sizes.back()));
      std::vector<int> ids(topo.resources().size());
      for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int>(i);
      std::sort(ids.begin(), ids.end(), [&](int a, int b) { return last.busy[a] > last.busy[b]; });
      auto line = [&](int id) {
        std::cout << fmt::format("#   {:<28} {:6.1f}%  {:>12} B\n", topo.resources()[id].name, 100 * last.busy[id] / last.time,
                                 last.bytes[id]);
      };
      for (std::size_t i = 0; i < std::min<std::size_t>(10, ids.size()); ++i) line(ids[i]);
      // Every NIC link (cluster), busy or not, in topology order: which NICs the plan really uses.
      int nics = 0, busyNics = 0;
      for (int id = 0; id < static_cast<int>(topo.resources().size()); ++id)
        if (topo.isNic(id)) {
          ++nics;
          busyNics += last.bytes[id] > 0 ? 1 : 0;
        }
      if (nics > 0) {
        std::cout << fmt::format("# NIC links: {} of {} carry data\n", busyNics, nics);
        for (int id = 0; id < static_cast<int>(topo.resources().size()); ++id)
          if (topo.isNic(id)) line(id);
      }
    }
    if (!cmd.trace.empty() && model == Model::Replay) {
      writeChromeTrace(last, topo, cmd.trace);
      std::cerr << "cclab-sim: wrote trace of the " << humanBytes(sizes.back()) << " run to " << cmd.trace << "\n";
    }
    all.push_back(toJson(run));
  }
  if (!cmd.common.json.empty()) writeJson(cmd.common.json, all.size() == 1 ? all[0] : nlohmann::json{{"runs", all}});
  return 0;
}

// ---- scale ----
struct ScaleCmd {
  Common common;
  std::string nodes = "1..128";
  std::string algos = "ring,tree,dbtree,rhd,hier-ring";
  Predictor predictorOn(const Topology& topo, Model model) const {
    return {.topo = topo, .model = model, .sliceBytes = common.sliceBytes(), .elemSize = common.elemSize(),
            .channels = common.channels, .protocol = common.protocol};
  }
  std::string size = "256M";
};

int runScale(const ScaleCmd& cmd) {
  const Common& common = cmd.common;
  checkOutput(common.json, "-J");
  const std::int64_t e = common.elemSize();
  const Bytes size = parseBytes(cmd.size);
  const auto nodeCounts = parseRange(cmd.nodes, "--nodes");
  if (common.model == Model::Replay)
    for (int n : nodeCounts)
      if (static_cast<std::int64_t>(n) * std::max(1, common.gpus) > kMaxScaleReplayRanks)
        throw InvalidArgument(fmt::format("--nodes {}: {} nodes of {} GPUs are {} ranks, more than the {} that scale --model replay "
                                          "replays (every algorithm at every node count takes minutes past it): use --model analytic",
                                          cmd.nodes, n, std::max(1, common.gpus), static_cast<std::int64_t>(n) * std::max(1, common.gpus),
                                          kMaxScaleReplayRanks));
  std::vector<SimAlgorithm> algos;
  for (const auto& text : splitList(cmd.algos)) {
    algos.push_back(parseSimAlgorithm(text));
    checkAlgorithm(Collective::AllReduce, algos.back(), true);  // hierarchical ones print "-" off a cluster
  }
  // The topology of each node count: n copies of a dump's node, a cluster of n nodes, else n x gpus ranks.
  const auto specFor = [&](int n) {
    if (isNcclTopologyArg(common.topo)) return *resolveNcclTopology(common.topo, n);
    const TopologySpec spec = resolveTopology(common.topo);
    return spec.kind == TopologyKind::Cluster ? resized(spec, 0, n, common.gpus) : resized(spec, n * std::max(1, common.gpus));
  };
  const auto skipped = [](SimAlgorithm a, const TopologySpec& spec) { return infoOf(a).hierarchical && spec.kind != TopologyKind::Cluster; };
  // Every replay of the table counted before its first line (replay_work.h); the analytic model's
  // predictions are not replays.
  ReplayWork work;
  const bool replays = std::any_of(algos.begin(), algos.end(), [&](SimAlgorithm a) {
    return !infoOf(a).analyticOnly && (infoOf(a).replayOnly || common.model == Model::Replay);  // Predictor::modelFor
  });
  for (int n : nodeCounts) {
    if (!replays) break;
    const TopologySpec spec = specFor(n);
    const Topology topo(spec);
    const Predictor predict = cmd.predictorOn(topo, common.model);
    for (const auto a : algos)
      if (!skipped(a, spec)) work.add(predict, Collective::AllReduce, a, topo.nranks(), size / e);
  }
  work.require("scale's replay work (op-slices of every algorithm at every node count)",
               "use --model analytic, fewer node counts or a smaller --size");
  nlohmann::json rows = nlohmann::json::array(), cross = nlohmann::json::array();
  std::cout << fmt::format("# cclab-sim scale: PREDICTED ({}) allreduce of {} per rank, topology {}, protocol {} (one per call)\n",
                           name(common.model), humanBytes(size), common.topo, name(common.protocol));
  std::string header = fmt::format("# {:>6} {:>6}", "nodes", "ranks");
  for (const auto a : algos) header += fmt::format(" | {:>10} {:>11} {:>6}", std::string(name(a)) + " us", "busbw GB/s", "proto");
  std::cout << header << " | tree<ring below  dbtree<ring below\n";
  for (int n : nodeCounts) {
    const TopologySpec spec = specFor(n);
    const Topology topo(spec);
    const int p = topo.nranks();
    std::string line = fmt::format("  {:>6} {:>6}", spec.kind == TopologyKind::Cluster ? spec.nodes : n, p);
    const Predictor predict = cmd.predictorOn(topo, common.model);
    for (const auto a : algos) {
      if (skipped(a, spec)) {
        line += fmt::format(" | {:>10} {:>11} {:>6}", "-", "-", "-");
        continue;
      }
      const Prediction t = predict.predict(Collective::AllReduce, a, p, size / e);
      const auto row = makeRow(Collective::AllReduce, p, size, e, t.time);
      line += fmt::format(" | {:>10.1f} {:>11.2f} {:>6}", t.time, row.busbw, name(t.protocol));
      rows.push_back({{"nodes", spec.nodes}, {"nranks", p}, {"algo", name(a)}, {"size", size}, {"time_us", t.time}, {"busbw", row.busbw},
                      {"algbw", row.algbw}, {"protocol", name(t.protocol)}});
    }
    // Crossovers use the analytic model (crossover.h).
    const auto treeX = allReduceCrossover(predict, SimAlgorithm::Tree, SimAlgorithm::Ring);
    const auto dbX = allReduceCrossover(predict, SimAlgorithm::DoubleBinaryTree, SimAlgorithm::Ring);
    line += fmt::format(" | {:>15} {:>17}", treeX ? humanBytes(*treeX) : "-", dbX ? humanBytes(*dbX) : "-");
    cross.push_back({{"nodes", spec.nodes}, {"nranks", p}, {"tree_vs_ring_bytes", treeX ? double(*treeX) : -1.0},
                     {"dbtree_vs_ring_bytes", dbX ? double(*dbX) : -1.0}});
    std::cout << line << std::endl;  // each node count as it is done: a long replay shows its progress
  }
  std::cout << "# crossover: the size below which tree (NCCL's) or dbtree (two flat binary trees) beats the ring (analytic model)\n";
  if (!common.json.empty())
    writeJson(common.json, {{"command", "scale"}, {"predicted", true}, {"model", name(common.model)}, {"topology", common.topo},
                            {"protocol", name(common.protocol)},
                            {"gpus_per_node", common.gpus}, {"size", size}, {"type", common.type}, {"rows", rows},
                            {"crossover", cross}});
  return 0;
}

// ---- straggler ----
struct StragglerCmd {
  Common common;
  int rank = 0;
  double slowdown = 2;
  double delay = 0;
  std::string link;
  bool computeOnly = false;
  std::string straggler;  // RANK:KEY=VALUE (collectives/core/straggler.h); replaces --rank/--slowdown/--delay
  std::string algos = "ring,tree,dbtree,rhd";
  std::string sizes = "64K,1M,16M,256M";
};

int runStraggler(const StragglerCmd& cmd) {
  const TopologySpec spec = cmd.common.spec();
  const Topology topo(spec);
  const int p = topo.nranks();
  const std::int64_t e = cmd.common.elemSize();
  const Straggler straggler = stragglerOf(cmd.straggler, cmd.rank, cmd.slowdown, cmd.delay, cmd.computeOnly);
  if (straggler.rank >= p)
    throw InvalidArgument("straggler rank " + std::to_string(straggler.rank) + " is not a rank of 0.." + std::to_string(p - 1));
  checkOutput(cmd.common.json, "-J");
  ReplayOptions slow{.stragglers = {straggler}};
  std::string what = "straggler " + format(straggler);
  if (!cmd.link.empty()) {
    const int id = topo.findResource(cmd.link);
    if (id < 0) throw InvalidArgument("--link '" + cmd.link + "' is not a link of the topology (e.g. rank0->switch)");
    slow.resourceSlowdown.assign(topo.resources().size(), 1.0);
    slow.resourceSlowdown[static_cast<std::size_t>(id)] = cmd.slowdown;
    what += ", link " + cmd.link + " /" + fmt::format("{}", cmd.slowdown);
  }
  std::cout << fmt::format("# cclab-sim straggler: PREDICTED (replay) allreduce, topology {}, {} ranks, {}\n", spec.name, p, what);
  std::cout << fmt::format("# {:>8} {:>10} {:>12} {:>12} {:>9} {:>12}  {}\n", "algo", "size", "base us", "straggled us", "slowdown",
                           "rank finish spread us", "protocol (base/straggled)");
  nlohmann::json rows = nlohmann::json::array();
  std::vector<SimAlgorithm> algos;
  for (const auto& text : splitList(cmd.algos)) {
    algos.push_back(parseSimAlgorithm(text));
    checkAlgorithm(Collective::AllReduce, algos.back(), spec.kind == TopologyKind::Cluster);
    if (infoOf(algos.back()).analyticOnly) throw InvalidArgument("straggler replays plans; --algos cannot include " + text);
  }
  for (const auto a : algos) {
    for (const auto& s : splitList(cmd.sizes)) {
      const Bytes size = parseBytes(s);
      const std::int64_t count = size / e;
      const Predictor base{.topo = topo, .model = Model::Replay, .sliceBytes = cmd.common.sliceBytes(), .elemSize = e,
                           .channels = cmd.common.channels, .protocol = cmd.common.protocol};
      Predictor straggled = base;
      straggled.replayOptions = slow;
      ReplayResult detail;
      const Prediction p0 = base.predict(Collective::AllReduce, a, p, count);
      const Prediction p1 = straggled.predict(Collective::AllReduce, a, p, count, &detail);
      const Micros t0 = p0.time, t1 = p1.time;
      const auto [lo, hi] = std::minmax_element(detail.finish.begin(), detail.finish.end());
      std::cout << fmt::format("  {:>8} {:>10} {:>12.1f} {:>12.1f} {:>8.2f}x {:>12.1f}  {}/{}\n", name(a), humanBytes(size), t0, t1, t1 / t0,
                               *hi - *lo, name(p0.protocol), name(p1.protocol));
      rows.push_back({{"algo", name(a)}, {"size", size}, {"base_us", t0}, {"straggled_us", t1}, {"slowdown", t1 / t0},
                      {"finish_us", detail.finish}, {"base_protocol", name(p0.protocol)}, {"straggled_protocol", name(p1.protocol)}});
    }
  }
  if (!cmd.common.json.empty())
    writeJson(cmd.common.json, {{"command", "straggler"}, {"predicted", true}, {"topology", spec.name}, {"nranks", p},
                                {"rank", straggler.rank}, {"factor", straggler.computeFactor},
                                {"link_factor", straggler.linkFactor},
                                {"delay_us", std::chrono::duration<double, std::micro>(straggler.startDelay).count()},
                                {"straggler", format(straggler)}, {"link", cmd.link},
                                {"compute_only", straggler.linkFactor == 1.0}, {"rows", rows}});
  return 0;
}

// ---- calibrate ----
struct CalibrateCmd {
  std::vector<std::string> measured, check;
  std::string topo = "host", out, json, params, holdout, slice = "auto";
  std::string minSize = "0";
  bool noCv = false;
  std::string collective;  // of nccl-tests logs that do not name their *_perf binary
  int nodes = 0;           // copies of an NCCL topology dump's node (--topo FILE.xml)
};

// A measured input: a *_perf -J file, or a nccl-tests text log (each run one Measurement; NCCL's
// algorithm is not in the log: the ring is assumed).
std::vector<Measurement> loadMeasurements(const std::string& path, const std::string& collective) {
  const std::string text = readInputFile(path, "measured file '" + path + "'");  // refused as every input is
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '{') return {loadMeasurement(path)};
  std::optional<Collective> chosen;
  if (!collective.empty()) chosen = plan::parseCollective(collective);
  const NcclTestsLog log = parseNcclTestsLog(text, path, chosen);
  for (const auto& w : log.warnings) std::cerr << "cclab-sim: warning: " << w << "\n";
  std::vector<Measurement> out;
  for (const auto& run : log.runs) out.push_back(toMeasurement(run, Algorithm::Ring));
  return out;
}

void printErrors(const char* title, const std::vector<PointError>& errors) {
  const auto s = summarize(errors);
  std::cout << fmt::format("# {}: {} points, mean |error| {:.1f}%, max |error| {:.1f}%\n", title, s.n, 100 * s.meanAbs, 100 * s.max);
  std::cout << fmt::format("# {:>6} {:>10} {:>12} {:>12} {:>8}  {}\n", "nranks", "size", "measured us", "predicted us", "error", "file");
  for (const auto& e : errors)
    std::cout << fmt::format("  {:>6} {:>10} {:>12.2f} {:>12.2f} {:>7.1f}%  {}\n", e.nranks, humanBytes(e.size), e.measured,
                             e.predicted, 100 * e.relError, e.source);
}

nlohmann::json errorsJson(const std::vector<PointError>& errors) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& e : errors)
    a.push_back({{"file", e.source}, {"nranks", e.nranks}, {"size", e.size}, {"measured_us", e.measured},
                 {"predicted_us", e.predicted}, {"rel_error", e.relError}});
  return a;
}

int runCalibrate(const CalibrateCmd& cmd) {
  checkOutput(cmd.out, "-o");
  checkOutput(cmd.json, "-J");
  conventions::checkDistinctOutputs({{"-o", cmd.out}, {"-J", cmd.json}});
  auto dump = resolveNcclTopology(cmd.topo, cmd.nodes);
  if (cmd.nodes > 0 && !dump) throw InvalidArgument("calibrate: --nodes is for an NCCL topology dump (--topo FILE.xml)");
  TopologySpec spec = dump ? *dump : resolveTopology(cmd.topo);
  std::vector<Bytes> holdout;
  for (const auto& s : splitList(cmd.holdout)) holdout.push_back(parseBytes(s));
  const Bytes minSize = parseBytes(cmd.minSize);
  std::vector<Measurement> measured, checked;
  for (const auto& f : cmd.measured)
    for (auto& m : loadMeasurements(f, cmd.collective)) measured.push_back(std::move(m));
  for (const auto& f : cmd.check)
    for (auto& m : loadMeasurements(f, cmd.collective)) checked.push_back(std::move(m));
  checkCalibrateInput(measured);  // before the first replay of a point
  checkCalibrateInput(checked);
  const auto [fitSet, checkSet] = splitForCalibration(measured, checked, holdout, minSize);
  for (const auto& m : fitSet)
    if (spec.kind == TopologyKind::Graph && m.nranks > spec.ranks)
      throw InvalidArgument("measured file '" + m.source + "': field 'nranks' is " + std::to_string(m.nranks) +
                            "; topology '" + spec.name + "' has " + std::to_string(spec.ranks) + " ranks");
  CalibrationOptions opt;
  opt.params = splitList(cmd.params);
  Common c;
  c.slice = cmd.slice;
  opt.sliceBytes = c.sliceBytes();
  // Before the first replay: a fit with fewer points than parameters is refused, cross-validation that
  // cannot run says why, and every replay of the fit and its folds is counted (replay_work.h).
  const std::size_t nparams = fitParams(spec, opt).size();
  checkDetermined(fitSet, nparams);
  const std::string cvSkipped =
      cmd.noCv ? std::string("--no-cv") : crossValidationSkipped(fitSet, nparams);
  ReplayWork work;
  addCalibrationWork(spec, fitSet, checkSet, opt, cvSkipped.empty() ? crossValidationSizes(fitSet).size() : 0, work);
  work.require("calibrate's replay work (op-slices of every point at every step of the fit and of each cross-validation fold, "
               "at most " + std::to_string(replaysPerFit(nparams, opt)) + " replays per fit)",
               "use fewer sizes (--min-size, --holdout-sizes) or ranks, fewer --params or --no-cv");
  const auto before = evaluate(spec, fitSet, opt.sliceBytes);
  const auto t0 = std::chrono::steady_clock::now();
  const CalibrationResult r = calibrate(spec, fitSet, checkSet, opt);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << fmt::format("# cclab-sim calibrate: topology {} ({}), {} iterations, {:.2f} s\n", spec.name, name(spec.kind), r.iterations, secs);
  std::cout << fmt::format("# {:<34} {:>12} {:>12}\n", "parameter", "initial", "fitted");
  for (const auto& [name, v] : r.fitted) std::cout << fmt::format("  {:<34} {:>12.4g} {:>12.4g}\n", name, r.initial.at(name), v);
  for (const auto& n : r.unidentified)
    std::cout << fmt::format("# {} is not identified by these measurements (it ended at its bound)\n", n);
  const auto b = summarize(before);
  std::cout << fmt::format("# before fitting: mean |error| {:.1f}%, max {:.1f}% on the fitted points\n", 100 * b.meanAbs, 100 * b.max);
  printErrors("fitted points", r.fit);
  if (!r.check.empty()) printErrors("held-out points", r.check);
  // Leave-one-size-out: each size predicted by the topology fitted to the other sizes.
  std::vector<PointError> cv;
  if (cvSkipped.empty()) {
    cv = leaveOneSizeOut(spec, fitSet, opt);
    printErrors("leave-one-size-out cross-validation (each size predicted by a fit to the others)", cv);
  } else {
    std::cout << "# cross-validation skipped: " << cvSkipped << "\n";
  }
  if (!cmd.out.empty()) {
    TopologySpec out = r.spec;
    out.name = spec.name + "-calibrated";
    saveTopologyFile(out, cmd.out);
    std::cerr << "cclab-sim: wrote calibrated topology to " << cmd.out << "\n";
  }
  if (!cmd.json.empty()) {
    const auto f = summarize(r.fit), k = summarize(r.check);
    writeJson(cmd.json, {{"command", "calibrate"}, {"topology", spec.name}, {"initial", r.initial}, {"fitted", r.fitted},
                         {"iterations", r.iterations}, {"unidentified", r.unidentified}, {"fit", errorsJson(r.fit)}, {"check", errorsJson(r.check)},
                         {"fit_mean_abs_error", f.meanAbs}, {"fit_max_abs_error", f.max},
                         {"check_mean_abs_error", k.meanAbs}, {"check_max_abs_error", k.max},
                         {"cv", errorsJson(cv)}, {"cv_mean_abs_error", summarize(cv).meanAbs}, {"cv_max_abs_error", summarize(cv).max},
                         {"cv_skipped", cvSkipped.empty() ? nlohmann::json(nullptr) : nlohmann::json(cvSkipped)}});
  }
  return 0;
}

// ---- compare: measured logs against the prediction ----
struct CompareCmd {
  std::vector<std::string> logs;
  std::string topo = "dgx-h100";
  int nodes = 0, nranks = 0, gpus = 0;
  std::string algo = "auto", collective, slice = "auto", json;
  Model model = Model::Analytic;
  ProtocolChoice protocol = ProtocolChoice::Auto;
};

int runCompare(const CompareCmd& cmd) {
  checkOutput(cmd.json, "-J");
  Common c;
  c.topo = cmd.topo;
  c.nodes = cmd.nodes;
  c.nranks = cmd.nranks;
  c.gpus = cmd.gpus;
  c.slice = cmd.slice;
  const TopologySpec spec = c.spec();
  // Each run on the topology of its rank count: a cluster (or one NCCL dump's node) takes the run's node
  // count unless --nodes or -g fixes it; otherwise compareRun refuses a run of other ranks.
  std::map<int, std::unique_ptr<Topology>> topos;
  const auto topoFor = [&](int nranks) -> const Topology& {
    auto& t = topos[nranks];
    if (t) return *t;
    TopologySpec s = spec;
    const bool free = cmd.nodes == 0 && cmd.nranks == 0 && nranks != spec.ranks && nranks > 0;
    const bool oneDump = isNcclTopologyArg(cmd.topo) && cmd.topo.find(',') == std::string::npos;
    const int perNode = spec.kind == TopologyKind::Cluster ? spec.gpusPerNode : spec.ranks;
    if (free && oneDump && perNode > 0 && nranks % perNode == 0)
      s = *resolveNcclTopology(cmd.topo, nranks / perNode);
    else if (free && !oneDump && spec.kind == TopologyKind::Cluster && nranks % perNode == 0)
      s = resized(spec, 0, nranks / perNode);
    t = std::make_unique<Topology>(s);
    return *t;
  };
  CompareOptions opt{.model = cmd.model, .algorithms = {}, .sliceBytes = c.sliceBytes(), .protocol = cmd.protocol};
  if (cmd.algo != "auto")
    for (const auto& a : splitList(cmd.algo)) opt.algorithms.push_back(parseSimAlgorithm(a));
  std::optional<Collective> chosen;
  if (!cmd.collective.empty()) chosen = plan::parseCollective(cmd.collective);
  std::vector<NcclTestsLog> logs;
  // A log without '#  Rank N' lines (a table posted alone) runs on the ranks -g or --nodes give.
  const int givenRanks = cmd.nranks > 0 || cmd.nodes > 0 ? spec.ranks : 0;
  for (const auto& f : cmd.logs) logs.push_back(loadMeasuredLog(f, chosen, givenRanks));
  // Every replay of every run counted before the first (replay_work.h).
  ReplayWork work;
  for (const auto& log : logs)
    for (const auto& run : log.runs) addCompareWork(topoFor(run.nranks), run, opt, work);
  work.require("compare's replay work (op-slices of every candidate algorithm for every row of every run)",
               "use --model analytic, fewer runs or one --algo");
  std::vector<CompareRow> all;
  int skipped = 0, dropped = 0;
  for (const auto& log : logs) {
    skipped += log.skippedRows;
    dropped += log.droppedCells;
    for (const auto& w : log.warnings) std::cerr << "cclab-sim: warning: " << w << "\n";
    for (const auto& run : log.runs) {
      const Topology& topo = topoFor(run.nranks);
      const auto rows = compareRun(topo, run, opt);
      std::cout << fmt::format("# cclab-sim compare: {} run {} ({}{}, {} ranks, {} rows) against PREDICTED ({}) on {}\n", run.source,
                               run.index, run.binary.empty() ? std::string(plan::name(run.collective)) : run.binary,
                               run.graph ? ", -G graph" : "", run.nranks, run.rows.size(), name(cmd.model), topo.spec().name);
      std::cout << fmt::format("# {:>11} {:>5} {:>12} {:>12} {:>8} {:>9} {:>6}  {:<9} {:>10} {:>10} {:>10}\n", "size", "place", "measured us",
                               "predicted us", "error", "algo", "proto", "dominant", "latency", "bandwidth", "reduction");
      for (const auto& r : rows)
        std::cout << fmt::format("  {:>11} {:>5} {:>12.2f} {:>12.2f} {:>7.1f}% {:>9} {:>6}  {:<9} {:>10.2f} {:>10.2f} {:>10.2f}\n", r.size,
                                 r.inPlace ? "ip" : "oop", r.measured, r.predicted, 100 * r.error, r.algorithm, name(r.protocol),
                                 r.dominant, r.latency, r.bandwidth, r.reduction);
      all.insert(all.end(), rows.begin(), rows.end());
    }
  }
  const auto summary = summarizeByCollective(all);
  for (const auto& s : summary)
    std::cout << fmt::format("# {}: {} rows, geometric-mean error factor x{:.3f} (exp of the mean |log(predicted/measured)|), "
                             "predicted/measured x{:.3f} (geometric mean)\n",
                             plan::name(s.collective), s.rows, 1 + s.geomeanAbsError, s.geomeanRatio);
  if (skipped > 0) std::cout << fmt::format("# {} line(s) that looked like table rows were skipped (warnings on stderr)\n", skipped);
  if (dropped > 0)
    std::cout << fmt::format("# {} time column(s) did not read and were dropped; their rows kept the other (warnings on stderr)\n", dropped);
  if (!cmd.json.empty()) {
    nlohmann::json rows = nlohmann::json::array(), sums = nlohmann::json::array();
    for (const auto& r : all)
      rows.push_back({{"file", r.source}, {"run", r.run}, {"collective", plan::name(r.collective)}, {"nranks", r.nranks}, {"size", r.size},
                      {"type", r.type}, {"in_place", r.inPlace}, {"measured_us", r.measured}, {"predicted_us", r.predicted},
                      {"rel_error", r.error}, {"algo", r.algorithm}, {"protocol", name(r.protocol)}, {"dominant", r.dominant},
                      {"latency_us", r.latency}, {"bandwidth_us", r.bandwidth}, {"reduction_us", r.reduction}});
    for (const auto& s : summary)
      sums.push_back({{"collective", plan::name(s.collective)}, {"rows", s.rows}, {"geomean_abs_error", s.geomeanAbsError},
                      {"geomean_ratio", s.geomeanRatio}});
    writeJson(cmd.json, {{"command", "compare"}, {"topology", spec.name}, {"nranks", spec.ranks}, {"model", name(cmd.model)},
                         {"files", cmd.logs}, {"skipped_rows", skipped}, {"dropped_cells", dropped}, {"rows", rows}, {"summary", sums}});
  }
  return 0;
}

// ---- bench: the simulator's own speed (recorded in docs/results/sim.md, never asserted) ----
int runBench(int ranks, const std::string& sizeText, const std::string& slice, const std::string& algo, plan::PlanShape shape,
             std::int64_t maxOpSlices, ProtocolChoice protocol) {
  using Clock = std::chrono::steady_clock;
  const Bytes size = parseBytes(sizeText);
  const Algorithm a = plan::parseAlgorithm(algo);
  if (!plan::hasGenerator(Collective::AllReduce, a)) throw InvalidArgument("--algo " + algo + " has no allreduce plan to replay");
  // Analytic: predictions per second over a sweep of sizes and rank counts on the dgx-h100 parameters.
  const Topology dgx(*findPreset("dgx-h100"));
  const CostParams k = effectiveParams(dgx, Collective::AllReduce, Algorithm::Ring, 8);
  const Algorithm algos[] = {Algorithm::Ring, Algorithm::Tree, Algorithm::DoubleBinaryTree, Algorithm::HalvingDoubling};
  std::int64_t n = 0;
  double sink = 0;
  const auto t0 = Clock::now();
  while (Clock::now() - t0 < std::chrono::milliseconds(500))
    for (int i = 0; i < 10000; ++i, ++n) {
      const Schedule s{.collective = Collective::AllReduce, .algorithm = algos[i % 4], .nranks = 2 + (i % 1023),
                       .count = std::int64_t{8} << (i % 28), .elemSize = 4, .sliceElems = 0};
      sink += predict(s, k);
    }
  const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  std::cout << fmt::format("analytic: {:.2f} M predictions/s ({} in {:.2f} s, checksum {:.3g})\n", n / secs / 1e6, n, secs, sink);
  // Replay of one plan on a switch of `ranks` ranks.
  TopologySpec spec = resized(*findPreset("dgx-h100"), ranks);
  const Topology topo(spec);
  const auto t1 = Clock::now();
  // The ring and hier allreduces replay from their rule (plan::makeOpSource), the others from makePlan.
  const auto ops = plan::makeOpSource(Collective::AllReduce, a, ranks, size / 4, 0, shape);
  const auto t2 = Clock::now();
  Common c;
  c.slice = slice;
  const ReplayOptions o{.sliceElems = sliceElemsOf(c.sliceBytes(), 4), .maxOpSlices = maxOpSlices, .protocol = protocol};
  const ReplayResult r = replay(*ops, topo, o);
  const auto t3 = Clock::now();
  std::cout << fmt::format("replay: {} allreduce, {} ranks, {} channel(s), {} ranks per node, {}, {} ops ({}), slice {}, {} op-slices "
                           "({} in all protocol runs, --protocol {}): plan {:.2f} s, replay {:.2f} s ({:.0f} ns per op-slice run); "
                           "predicted {:.1f} us ({})\n",
                           algo, ranks, shape.channels, shape.ranksPerNode, humanBytes(size), ops->totalOps(),
                           dynamic_cast<const plan::PlanOpSource*>(ops.get()) ? "materialized" : "rule",
                           r.sliceElems > 0 ? humanBytes(r.sliceElems * 4) : "whole-op", r.steps, r.stepsAllRuns, name(protocol),
                           std::chrono::duration<double>(t2 - t1).count(), std::chrono::duration<double>(t3 - t2).count(),
                           1e9 * std::chrono::duration<double>(t3 - t2).count() / static_cast<double>(std::max<std::int64_t>(1, r.stepsAllRuns)),
                           r.time, name(r.protocol));
  return 0;
}

int runTopo(const std::string& name, const std::string& out, bool describe, const std::string& fromNccl, int nodes) {
  if (name.empty() == fromNccl.empty()) throw InvalidArgument("topo: give a preset or file, or --from-nccl FILE.xml[,FILE.xml...]");
  if (!fromNccl.empty() && !isNcclTopologyArg(fromNccl)) throw InvalidArgument("--from-nccl '" + fromNccl + "' names no .xml file");
  const TopologySpec spec = fromNccl.empty() ? resolveTopology(name) : *resolveNcclTopology(fromNccl, nodes);
  if (describe && !fromNccl.empty())
    for (const auto& part : ncclTopologyFiles(fromNccl)) std::cout << "# " << part << ":\n" << sim::describe(summarize(loadNcclSystem(part)));
  if (describe) {
    const Topology topo(spec);
    std::cout << fmt::format("# {} ({}), {} ranks, {} resources\n", spec.name, sim::name(spec.kind), topo.nranks(), topo.resources().size());
    for (const auto& r : topo.resources())
      std::cout << fmt::format("  {:<32} {:<8} {:>8.3f} us {:>9.2f} GB/s\n", r.name, r.cls, r.latency, r.bandwidth);
    return 0;
  }
  const std::string text = toJson(spec).dump(2) + "\n";
  if (out.empty()) {
    std::cout << text;
  } else {
    conventions::checkWritable(out, "-o");
    conventions::writeFileAtomically(out, text);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  conventions::ignoreFileSizeSignal();  // ulimit -f: an output fails with one line (exit 1), not SIGXFSZ
  CLI::App app{"cclab-sim: predicted collective performance (analytic model and plan replay)"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all");

  struct Named {
    const char* name;
    Collective c;
  };
  const Named colls[] = {{"allreduce", Collective::AllReduce}, {"reducescatter", Collective::ReduceScatter},
                         {"allgather", Collective::AllGather}, {"broadcast", Collective::Broadcast},
                         {"reduce", Collective::Reduce}};
  std::vector<CollectiveCmd> collCmds(std::size(colls));
  std::vector<CLI::App*> collApps;
  for (std::size_t i = 0; i < std::size(colls); ++i) {
    auto* sub = app.add_subcommand(colls[i].name, fmt::format("predict {} in all_reduce_perf's format", colls[i].name));
    auto& c = collCmds[i];
    c.common.add(sub);
    sub->add_option("--algo,-a", c.algo, "algorithm(s), comma separated: " + algorithmNames() + "; or nccl: NCCL's tuner pick against ours")->capture_default_str();
    sub->add_option("-b,--minbytes", c.minBytes, "smallest size (K/M/G)")->capture_default_str();
    sub->add_option("-e,--maxbytes", c.maxBytes, "largest size (K/M/G)")->capture_default_str();
    sub->add_option("-f,--stepfactor", c.factor, "multiply the size by this each step")->capture_default_str();
    sub->add_option("-i,--stepbytes", c.increment, "add this to the size each step (instead of -f)");
    sub->add_option("--trace", c.trace, "Chrome-trace JSON of the largest size (replay)")->check(nonEmptyPath);
    sub->add_flag("--links", c.links, "print link utilisation of the largest size (replay)");
    collApps.push_back(sub);
  }
  ScaleCmd scale;
  auto* scaleApp = app.add_subcommand("scale", "time and busbw per algorithm against rank count, and ring/tree crossovers");
  scale.common.topo = "cluster";
  scale.common.model = Model::Analytic;
  scale.common.gpus = 8;
  scale.common.add(scaleApp);
  scaleApp->add_option("--nodes-range,--range", scale.nodes, "A..B (powers of two) or a list")->capture_default_str();
  scaleApp->add_option("--algos", scale.algos, "algorithms: " + algorithmNames())->capture_default_str();
  scaleApp->add_option("--size,-s", scale.size, "bytes per rank")->capture_default_str();
  // `--nodes 1..128` is the documented spelling: take it over the integer --nodes of Common.
  scaleApp->remove_option(scaleApp->get_option("--nodes"));
  scaleApp->add_option("--nodes", scale.nodes, "A..B (powers of two) or a list")->capture_default_str();

  StragglerCmd strag;
  auto* stragApp = app.add_subcommand("straggler", "effect of one slow rank or link on each algorithm (replay)");
  strag.common.add(stragApp, false);
  stragApp->add_option("--rank", strag.rank, "the slow rank")->capture_default_str();
  stragApp->add_option("--slowdown,-F", strag.slowdown, "factor >= 1: its compute is this much slower, its links this much narrower")->capture_default_str();
  stragApp->add_option("--delay", strag.delay, "start delay of the rank, us")->capture_default_str();
  stragApp->add_option("--link", strag.link, "also (or only, with --slowdown on links) slow this link, e.g. rank3->switch");
  stragApp->add_flag("--compute-only", strag.computeOnly, "slow the rank's compute, not its links");
  stragApp->add_option("--straggler", strag.straggler,
                       "RANK:delay=T,compute=F,link=F (RANK:F slows compute and links by F); replaces --rank, --slowdown, --delay");
  stragApp->add_option("--algos", strag.algos, "algorithms: " + algorithmNames())->capture_default_str();
  stragApp->add_option("--sizes", strag.sizes, "sizes (K/M/G), comma separated")->capture_default_str();

  CalibrateCmd cal;
  auto* calApp = app.add_subcommand("calibrate", "fit latency, bandwidth and reduction speed to a measured *_perf -J file");
  calApp->add_option("--measured,-m", cal.measured, "measured *_perf -J file or nccl-tests log to fit (repeatable)")->required();
  calApp->add_option("--nodes", cal.nodes, "with --topo FILE.xml: this many copies of the dump's node")->check(CLI::Range(1, kMaxTopologyRanks));
  calApp->add_flag("--no-cv", cal.noCv, "skip the leave-one-size-out cross-validation (one more fit per size)");
  calApp->add_option("--collective", cal.collective, "the collective of a nccl-tests log that does not name its *_perf binary");
  calApp->add_option("--check", cal.check, "measured JSON held out of the fit, only checked (repeatable)");
  calApp->add_option("--holdout-sizes", cal.holdout, "sizes of the --measured files held out of the fit (K/M/G, comma separated)");
  calApp->add_option("--min-size", cal.minSize, "ignore measured sizes below this")->capture_default_str();
  calApp->add_option("--topo,-t", cal.topo, "initial topology (preset or file)")->capture_default_str();
  calApp->add_option("--params", cal.params, "parameters to fit, e.g. classes.thread.latency_us,compute.reduce_gbps");
  calApp->add_option("--slice", cal.slice, "replay slice size (bytes, auto, whole)")->capture_default_str();
  calApp->add_option("-o,--output", cal.out, "write the calibrated topology here")->check(nonEmptyPath);
  calApp->add_option("-J,--json", cal.json, "write the fit and its errors as JSON")->check(nonEmptyPath);

  CompareCmd cmp;
  auto* cmpApp = app.add_subcommand("compare", "measured nccl-tests logs or *_perf -J files against the prediction, row by row");
  cmpApp->add_option("logs", cmp.logs, "nccl-tests output (text) or -J files")->required();
  cmpApp->add_option("--topo,-t", cmp.topo, "preset, topology file, or NCCL topology dump(s) (.xml)")->capture_default_str();
  cmpApp->add_option("--nodes", cmp.nodes, "nodes (cluster, or copies of a dump's node)")->check(CLI::Range(1, kMaxTopologyRanks));
  cmpApp->add_option("-g,--nranks", cmp.nranks, "ranks (default: the topology's)")->check(CLI::Range(1, kMaxTopologyRanks));
  cmpApp->add_option("--gpus", cmp.gpus, "cluster: GPUs per node")->check(CLI::Range(1, kMaxTopologyRanks));
  cmpApp->add_option("--algo,-a", cmp.algo, "algorithm(s) to predict with (the fastest is taken); auto: ring, tree, and nvls where the topology has it")
      ->capture_default_str();
  cmpApp->add_option("--collective", cmp.collective, "the collective of a log that does not name its *_perf binary");
  cmpApp->add_option_function<std::string>("--model", [&](const std::string& m) { cmp.model = parseModel(m); },
                                           "analytic (default) or replay");
  cmpApp->add_option_function<std::string>("--protocol", [&](const std::string& p) { cmp.protocol = parseProtocolChoice(p); },
                                           "ll, ll128, simple or auto (default)");
  cmpApp->add_option("--slice", cmp.slice, "slice size (bytes, auto, whole)")->capture_default_str();
  cmpApp->add_option("-J,--json", cmp.json, "write the rows and the summary as JSON")->check(nonEmptyPath);

  std::string topoName, topoOut;
  bool describe = false;
  auto* topoApp = app.add_subcommand("topo", "print a preset or file as a topology file (JSON), or its links");
  std::string topoFromNccl;
  int topoNodes = 0;
  topoApp->add_option("name", topoName, "preset or file");
  topoApp->add_option("--from-nccl", topoFromNccl, "NCCL topology dump(s) (NCCL_TOPO_DUMP_FILE), comma separated: one per node");
  topoApp->add_option("--nodes", topoNodes, "with --from-nccl and one file: this many copies of its node")->check(CLI::Range(1, kMaxTopologyRanks));
  topoApp->add_option("-o,--output", topoOut, "write to this file")->check(nonEmptyPath);
  topoApp->add_flag("--describe", describe, "list the expanded links and their parameters");

  int benchRanks = 1024;
  std::string benchSize = "64M", benchSlice = "auto", benchAlgo = "ring";
  auto* benchApp = app.add_subcommand("bench", "the simulator's own speed: analytic predictions/s, replay time");
  benchApp->add_option("--ranks", benchRanks, "ranks of the replayed plan")->capture_default_str()->check(CLI::Range(1, kMaxReplayRanks));
  benchApp->add_option("--size", benchSize, "allreduce size")->capture_default_str();
  benchApp->add_option("--slice", benchSlice, "slice (bytes, auto, whole)")->capture_default_str();
  benchApp->add_option("--algo", benchAlgo, "allreduce plan algorithm: ring, tree, flat-tree, dbtree, rhd, rd, hier, oneshot, twoshot")->capture_default_str();
  plan::PlanShape benchShape;
  benchApp->add_option("--channels", benchShape.channels, "plan channels")->capture_default_str()->check(CLI::Range(1, plan::kMaxChannels));
  benchApp->add_option("--ranks-per-node", benchShape.ranksPerNode, "ranks per node of the plan (hier; ring channel orders)")
      ->capture_default_str()->check(CLI::Range(0, kMaxReplayRanks));
  std::int64_t benchMaxOpSlices = kMaxReplayOpSlices;
  ProtocolChoice benchProtocol = ProtocolChoice::Auto;
  benchApp->add_option_function<std::string>("--protocol", [&](const std::string& p) { benchProtocol = parseProtocolChoice(p); },
                                             "ll, ll128, simple or auto (default: auto, a run per protocol)");
  benchApp->add_option("--max-op-slices", benchMaxOpSlices, "refuse a replay of more op-slices")
      ->capture_default_str()->check(CLI::Range(std::int64_t{1}, kMaxReplayOpSlicesRaised));

  PlanCommand planCmd;
  auto* planApp = app.add_subcommand("plan", "print a plan, or export it as an MSCCL XML or MSCCL++ JSON algorithm file");
  planApp->add_option("--collective,-c", planCmd.collective, "allreduce, reducescatter, allgather, broadcast, reduce")->capture_default_str();
  planApp->add_option("--algo,-a", planCmd.algo, "a plan algorithm or file:PATH (an MSCCL XML or MSCCL++ JSON file)")->capture_default_str();
  planApp->add_option("-g,--nranks", planCmd.nranks, "ranks")->capture_default_str()->check(CLI::Range(1, kMaxReplayRanks));
  planApp->add_option("--count", planCmd.count, "elements per rank (NCCL's count)")->capture_default_str()->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 40));
  planApp->add_option("--root", planCmd.root, "root (broadcast, reduce)")->capture_default_str();
  planApp->add_option("--channels", planCmd.channels, "plan channels")->capture_default_str()->check(CLI::Range(1, plan::kMaxChannels));
  planApp->add_option("--ranks-per-node", planCmd.ranksPerNode, "ranks per node (hier, tree, ring orders)")->capture_default_str()->check(CLI::Range(0, kMaxReplayRanks));
  planApp->add_option("--export", planCmd.exportFormat, "msccl-xml or mscclpp-json (default: print the plan's ops)");
  planApp->add_option("--name", planCmd.name, "the algorithm's name in the exported file");
  planApp->add_option("-o,--output", planCmd.output, "write to this file (default: stdout)")->check(nonEmptyPath);

  // The one catch: CLI11's help exits 0 and its parse errors 2; everything else by exitCodeFor.
  try {
    app.parse(argc, argv);
    for (std::size_t i = 0; i < collApps.size(); ++i)
      if (collApps[i]->parsed()) return runCollective(colls[i].c, collCmds[i]);
    if (scaleApp->parsed()) return runScale(scale);
    if (stragApp->parsed()) return runStraggler(strag);
    if (calApp->parsed()) return runCalibrate(cal);
    if (cmpApp->parsed()) return runCompare(cmp);
    if (topoApp->parsed()) return runTopo(topoName, topoOut, describe, topoFromNccl, topoNodes);
    if (planApp->parsed()) return runPlanCommand(planCmd);
    if (benchApp->parsed()) return runBench(benchRanks, benchSize, benchSlice, benchAlgo, benchShape, benchMaxOpSlices, benchProtocol);
    return 2;
  } catch (const std::exception& e) {
    if (const auto* cli = dynamic_cast<const CLI::Error*>(&e)) {
      if (cli->get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(*cli);
      std::cerr << "cclab-sim: " << e.what() << " (see --help)\n";
      return 2;
    }
    std::cerr << "cclab-sim: error: " << e.what() << "\n";
    return exitCodeFor(e);
  }
}
