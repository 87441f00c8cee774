#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "collectives/core/errors.h"
#include "sim/measured.h"
#include "sim/presets.h"
#include "sim/replay.h"
#include "sim/topology.h"
#include "sim/topology_json.h"

using namespace cclab::sim;
using nlohmann::json;

namespace {

std::string errorOf(const json& j) {
  try {
    parseTopology(j);
  } catch (const TopologyError& e) {
    return e.what();
  }
  return "";
}

json validSwitch() {
  return json::parse(R"({"name":"t","kind":"switch","ranks":4,"classes":{"link":{"latency_us":1,"bandwidth_gbps":10}}})");
}

}  // namespace

TEST(Topology, PresetsExpandAndRoute) {
  for (const auto& name : presetNames()) {
    const auto spec = findPreset(name);
    ASSERT_TRUE(spec.has_value()) << name;
    const Topology t(*spec);
    EXPECT_GE(t.nranks(), 2) << name;
    for (int r = 1; r < t.nranks(); ++r) EXPECT_FALSE(t.route(0, r).resources.empty()) << name;
  }
}

TEST(Topology, DgxRouteCrossesTheSwitchOnce) {
  const Topology t(*findPreset("dgx-h100"));
  const Route r = t.route(0, 5);
  ASSERT_EQ(r.resources.size(), 2U);
  EXPECT_EQ(t.resources()[r.resources[0]].name, "rank0->switch");
  EXPECT_EQ(t.resources()[r.resources[1]].name, "switch->rank5");
  EXPECT_NEAR(r.bottleneck, 450 * 256.0 / 272.0, 1e-9);  // NVLink line rate x its packet efficiency (presets.cc)
  EXPECT_NEAR(r.latency, 0.7, 1e-12);
}

TEST(Topology, ClusterRoutesIntraOverNvlinkInterOverNics) {
  auto spec = resized(*findPreset("cluster"), 0, 2, 8);
  spec.nicsPerNode = 4;
  const Topology t(spec);
  ASSERT_EQ(t.nranks(), 16);
  const Route intra = t.route(0, 1);
  for (int id : intra.resources) EXPECT_EQ(t.resources()[id].cls, "intra");
  const Route inter = t.route(1, 9);
  ASSERT_EQ(inter.resources.size(), 4U);
  EXPECT_EQ(t.resources()[inter.resources[1]].name, "node0.nic0->fabric");
  EXPECT_EQ(t.resources()[inter.resources[2]].name, "fabric->node1.nic0");
}

TEST(Topology, HostRoutesThroughTheSharedMemory) {
  const Topology t(resized(*findPreset("host"), 4));
  const Route r = t.route(2, 3);
  ASSERT_EQ(r.resources.size(), 3U);
  EXPECT_EQ(t.resources()[r.resources[1]].name, "memory");
  EXPECT_NEAR(r.bottleneck, 25.5, 1e-12);
  // 4 threads on 2 cores: each reduces at half speed.
  EXPECT_NEAR(t.reduceCost(), 2 * inverseBandwidth(8), 1e-18);
}

TEST(Topology, JsonRoundTrip) {
  for (const auto& name : presetNames()) {
    const auto spec = *findPreset(name);
    EXPECT_EQ(parseTopology(toJson(spec)), spec) << name;
  }
}

TEST(Topology, PresetFilesMatchBuiltins) {
  for (const auto& name : presetNames()) {
    const std::string path = std::string(CCLAB_SOURCE_DIR) + "/sim/topologies/" + name + ".json";
    ASSERT_TRUE(std::filesystem::exists(path)) << path;
    EXPECT_EQ(loadTopologyFile(path), *findPreset(name)) << path << " differs from the preset; regenerate with cclab-sim topo";
  }
}

TEST(Topology, GraphFile) {
  const auto j = json::parse(R"({"kind":"graph","ranks":3,
    "nodes":[{"name":"sw","class":"backplane"}],
    "links":[{"a":"rank0","b":"sw","class":"l"},{"a":"rank1","b":"sw","class":"l"},{"a":"rank2","b":"rank1","class":"l"}],
    "classes":{"l":{"latency_us":1,"bandwidth_gbps":10},"backplane":{"bandwidth_gbps":15}}})");
  const Topology t(parseTopology(j));
  const Route r = t.route(0, 1);
  ASSERT_EQ(r.resources.size(), 3U);  // link, backplane, link
  EXPECT_EQ(t.resources()[r.resources[1]].name, "sw");
  EXPECT_THROW(t.route(0, 2), TopologyError);  // rank1 does not forward
}

TEST(Topology, BadFilesNameTheField) {
  auto j = validSwitch();
  EXPECT_EQ(errorOf(j), "");
  j.erase("kind");
  EXPECT_NE(errorOf(j).find("'kind'"), std::string::npos);
  j = validSwitch();
  j["kind"] = "torus";
  EXPECT_NE(errorOf(j).find("'kind'"), std::string::npos);
  j = validSwitch();
  j["ranks"] = 0;
  EXPECT_NE(errorOf(j).find("'ranks'"), std::string::npos);
  j = validSwitch();
  j["ranks"] = "eight";
  EXPECT_NE(errorOf(j).find("'ranks'"), std::string::npos);
  j = validSwitch();
  j["classes"]["link"]["bandwidth_gbps"] = -3;
  EXPECT_NE(errorOf(j).find("'classes.link.bandwidth_gbps'"), std::string::npos);
  j = validSwitch();
  j["classes"]["link"]["latency_us"] = "fast";
  EXPECT_NE(errorOf(j).find("'classes.link.latency_us'"), std::string::npos);
  j = validSwitch();
  j["classes"].erase("link");
  j["classes"]["nvlink"] = {{"bandwidth_gbps", 1}};
  EXPECT_NE(errorOf(j).find("'classes.link'"), std::string::npos);
  j = validSwitch();
  j["bandwith"] = 3;  // a typo
  EXPECT_NE(errorOf(j).find("'bandwith'"), std::string::npos);
  j = validSwitch();
  j["protocol_efficiency"] = 1.5;
  EXPECT_NE(errorOf(j).find("'protocol_efficiency'"), std::string::npos);
  j = validSwitch();
  j["compute"] = {{"reduce_gbps", -1}};
  EXPECT_NE(errorOf(j).find("'compute.reduce_gbps'"), std::string::npos);
  const auto g = json::parse(R"({"kind":"graph","ranks":2,"links":[{"a":"rank0","b":"rank9","class":"l"}],
                                 "classes":{"l":{"bandwidth_gbps":1}}})");
  EXPECT_NE(errorOf(g).find("'links[0].b'"), std::string::npos);
  const auto c = json::parse(R"({"kind":"cluster","nodes":2,"gpus_per_node":8,"nics_per_node":9,
     "classes":{"intra":{"bandwidth_gbps":1},"pcie":{"bandwidth_gbps":1},"nic":{"bandwidth_gbps":1}}})");
  EXPECT_NE(errorOf(c).find("'nics_per_node'"), std::string::npos);
}

TEST(Topology, BadFileOnDiskNamesFileAndField) {
  const auto path = std::filesystem::temp_directory_path() / "cclab_sim_bad_topo.json";
  {
    std::ofstream(path) << R"({"kind":"switch","ranks":4,"classes":{"link":{"bandwidth_gbps":0}}})";
  }
  try {
    loadTopologyFile(path.string());
    FAIL() << "accepted a zero bandwidth";
  } catch (const TopologyError& e) {
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("classes.link.bandwidth_gbps"), std::string::npos);
  }
  {
    std::ofstream(path) << "{not json";
  }
  EXPECT_THROW(loadTopologyFile(path.string()), TopologyError);
  std::filesystem::remove(path);
  EXPECT_THROW(resolveTopology("no-such-preset-or-file"), TopologyError);
}

// Found by fuzz/topology_json_fuzz: nodes * gpus_per_node overflowed int before checkSpec saw the
// factors (undefined behaviour: UBSan in the fuzz build, replayed by its seed; a plain build refuses the
// factors later either way), and a number beyond double (1e999) escaped as a JSON library exception.
TEST(Topology, FuzzFoundOverflowsAreRefused) {
  const auto c = json::parse(R"({"kind":"cluster","nodes":65537,"gpus_per_node":65537,
     "classes":{"intra":{"bandwidth_gbps":1},"pcie":{"bandwidth_gbps":1},"nic":{"bandwidth_gbps":1}}})");
  EXPECT_NE(errorOf(c).find("'gpus_per_node'"), std::string::npos);
  const auto path = std::filesystem::temp_directory_path() / "cclab_sim_fuzz_topo.json";
  std::ofstream(path) << R"({"kind":"switch","ranks":4,"classes":{"link":{"bandwidth_gbps":1e999}}})";
  EXPECT_THROW(loadTopologyFile(path.string()), TopologyError) << "a number beyond double";
  std::filesystem::remove(path);
}

// Found by fuzz/topology_json_fuzz building the Topology: fully_connected has a link per pair of ranks,
// so 100,000 ranks meant 5·10^9 links and an out-of-memory kill; refused up front now.
TEST(Topology, FullyConnectedRunawayIsRefused) {
  auto j = json::parse(R"({"kind":"fully_connected","ranks":512,"classes":{"link":{"bandwidth_gbps":10}}})");
  EXPECT_EQ(errorOf(j), "");
  EXPECT_EQ(Topology(parseTopology(j)).nranks(), 512);
  for (int ranks : {513, 100000}) {
    j["ranks"] = ranks;
    EXPECT_NE(errorOf(j).find("'ranks'"), std::string::npos) << ranks;
  }
}

namespace cclab::sim {
namespace {

// Writes `text` to a temporary file and returns the error message loading it gives ("" if none).
std::string loadError(const std::string& text, bool measured = false) {
  const auto path = std::filesystem::temp_directory_path() / "cclab_sim_refusal.json";
  std::ofstream(path) << text;
  std::string what;
  try {
    if (measured)
      loadMeasurement(path.string());
    else
      loadTopologyFile(path.string());
  } catch (const InvalidArgument& e) {
    what = e.what();
  }
  std::filesystem::remove(path);
  return what;
}

TEST(Refusals, NonPhysicalTopologyValuesNameTheField) {
  const std::string head = R"({"kind":"switch","ranks":4,"classes":{"link":)";
  EXPECT_NE(loadError(head + R"({"latency_us":1e308,"bandwidth_gbps":5}}})").find("classes.link.latency_us"), std::string::npos);
  EXPECT_NE(loadError(head + R"({"latency_us":1,"bandwidth_gbps":1e-300}}})").find("classes.link.bandwidth_gbps"),
            std::string::npos);
  EXPECT_NE(loadError(head + R"({"latency_us":1,"bandwidth_gbps":5}},"protocol_efficiency":1e-300})").find("protocol_efficiency"),
            std::string::npos);
  EXPECT_NE(loadError(head + R"({"latency_us":1,"bandwidth_gbps":5}},"compute":{"reduce_gbps":1e300}})").find("compute.reduce_gbps"),
            std::string::npos);
  EXPECT_EQ(loadError(head + R"({"latency_us":1,"bandwidth_gbps":5}}})"), "");
  const std::string overflow = loadError(head + R"({"latency_us":1e400,"bandwidth_gbps":5}}})");
  EXPECT_NE(overflow.find("out of range"), std::string::npos) << overflow;
  EXPECT_NE(overflow.find("cclab_sim_refusal.json"), std::string::npos) << overflow;
}

TEST(Refusals, DirectoriesAndMissingFilesAreNamed) {
  const std::string dir = std::filesystem::temp_directory_path().string();
  for (bool measured : {false, true}) {
    try {
      if (measured)
        loadMeasurement(dir);
      else
        loadTopologyFile(dir);
      FAIL() << "loaded a directory";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("is a directory"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(dir), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(loadMeasurement("/no/such/file.json"), MeasuredError);
}

TEST(Refusals, MeasuredFilesWithRunawayRankCountsOrNumbers) {
  const std::string rows = R"(,"results":[{"size":1024,"time_us":5}]})";
  EXPECT_EQ(loadError(R"({"nranks":4)" + rows, true), "");
  const std::string tooMany = std::to_string(kMaxReplayRanks + 1);
  for (const char* nranks : {tooMany.c_str(), "1e30", "0", "2.5", "-3"}) {
    const std::string what = loadError(std::string(R"({"nranks":)") + nranks + rows, true);
    EXPECT_NE(what.find("'nranks'"), std::string::npos) << nranks << ": " << what;
  }
  EXPECT_NE(loadError(R"({"nranks":4,"results":[{"size":1e300,"time_us":5}]})", true).find("results[0].size"), std::string::npos);
  EXPECT_NE(loadError(R"({"nranks":4,"results":[{"size":8,"time_us":1e300}]})", true).find("time_us"), std::string::npos);
  std::string many = R"({"nranks":2,"results":[)";
  for (std::size_t i = 0; i <= kMaxMeasuredRows; ++i) many += std::string(i ? "," : "") + R"({"size":8,"time_us":1})";
  EXPECT_NE(loadError(many + "]}", true).find("'results'"), std::string::npos);
}

}  // namespace
}  // namespace cclab::sim

namespace cclab::sim {
namespace {

TEST(TopologyKinds, NamesRoundTripAndAnUnknownKindListsThemAll) {
  for (TopologyKind k : {TopologyKind::Switch, TopologyKind::FullyConnected, TopologyKind::Pcie, TopologyKind::Cluster,
                         TopologyKind::Host, TopologyKind::Graph})
    EXPECT_EQ(parseTopologyKind(name(k)), k);
  try {
    parseTopologyKind("torus");
    FAIL() << "torus parsed";
  } catch (const TopologyError& e) {
    EXPECT_NE(std::string(e.what()).find("switch, fully_connected, pcie, cluster, host, graph"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace cclab::sim

// routesFrom expands only non-rank nodes and stops early; it must give exactly the plain
// breadth-first search's routes (same resources in the same order, ties to the link listed first).
TEST(Topology, FastRoutesEqualTheFullSearch) {
  std::vector<TopologySpec> specs;
  for (const auto& name : presetNames()) specs.push_back(*findPreset(name));
  specs.push_back(resized(*findPreset("cluster"), 0, 3, 4));
  TopologySpec fc;
  fc.name = "fc";
  fc.kind = TopologyKind::FullyConnected;
  fc.ranks = 5;
  fc.classes["link"] = {1, 10};
  specs.push_back(fc);
  // A graph with parallel links, a capacity node and two equally short paths.
  auto j = json::parse(R"({"name":"g","kind":"graph","ranks":4,
    "classes":{"a":{"latency_us":1,"bandwidth_gbps":10},"b":{"latency_us":2,"bandwidth_gbps":5},"cap":{"bandwidth_gbps":7}},
    "nodes":[{"name":"s1","class":"cap"},{"name":"s2"}],
    "links":[{"a":"rank0","b":"s1","class":"a"},{"a":"rank0","b":"s1","class":"b"},{"a":"rank1","b":"s1","class":"a"},
             {"a":"rank1","b":"s2","class":"b"},{"a":"rank2","b":"s2","class":"a"},{"a":"s1","b":"s2","class":"b"},
             {"a":"rank3","b":"s2","class":"a"},{"a":"rank3","b":"s1","class":"b"},{"a":"rank0","b":"rank2","class":"a"}]})");
  specs.push_back(parseTopology(j));
  for (const auto& spec : specs) {
    const Topology t(spec);
    std::vector<int> all(static_cast<std::size_t>(t.nranks()));
    for (int r = 0; r < t.nranks(); ++r) all[static_cast<std::size_t>(r)] = r;
    for (int src = 0; src < t.nranks(); ++src) {
      const auto fast = t.routesFrom(src, all), full = t.routesByFullSearch(src, all);
      ASSERT_EQ(fast.size(), full.size());
      for (std::size_t d = 0; d < all.size(); ++d) {
        EXPECT_EQ(fast[d].resources, full[d].resources) << spec.name << " " << src << "->" << d;
        EXPECT_EQ(fast[d].latency, full[d].latency) << spec.name << " " << src << "->" << d;
        EXPECT_EQ(fast[d].bottleneck, full[d].bottleneck) << spec.name << " " << src << "->" << d;
        EXPECT_EQ(t.routesFrom(src, {all[d]}).front().resources, full[d].resources) << spec.name << " " << src << "->" << d;
      }
    }
  }
}

namespace cclab::sim {
namespace {

// A topology file with an absurd rank count is refused naming the field and the limit, before any
// node is built.
TEST(Refusals, TopologyFilesWithRunawayRankCounts) {
  const std::string limit = std::to_string(kMaxTopologyRanks);
  for (const std::string& ranks : {std::to_string(kMaxTopologyRanks + 1), std::string("1e30"), std::string("4294967297")}) {
    const std::string what = loadError(R"({"kind":"switch","ranks":)" + ranks + R"(,"classes":{"link":{"bandwidth_gbps":10}}})");
    EXPECT_NE(what.find("'ranks'"), std::string::npos) << ranks << ": " << what;
    if (ranks == "4294967297") {  // past int: the parser's own range
      EXPECT_NE(what.find("2^30"), std::string::npos) << ranks << ": " << what;
    } else if (ranks != "1e30") {  // 1e30 is not an integer: "must be an integer"
      EXPECT_NE(what.find(limit), std::string::npos) << ranks << ": " << what;
    }
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
  const std::string cluster = loadError(
      R"({"kind":"cluster","nodes":1048576,"gpus_per_node":8,"classes":{"intra":{"bandwidth_gbps":10},"pcie":{"bandwidth_gbps":10},"nic":{"bandwidth_gbps":10}}})");
  EXPECT_NE(cluster.find("'nodes'"), std::string::npos) << cluster;
}

// linkCount is what a Topology really builds (two link-direction resources per link), and a topology
// whose links would not fit in the memory available is refused in one line that names both numbers.
TEST(Refusals, TopologiesThatWouldNotFitInMemory) {
  std::vector<TopologySpec> specs;
  for (const auto& name : presetNames()) specs.push_back(*findPreset(name));
  specs.push_back(resized(*findPreset("cluster"), 0, 3, 4));
  specs.push_back(resized(*findPreset("pcie"), 13));
  for (const auto& spec : specs) {
    const Topology t(spec);
    std::int64_t directions = 0;
    for (const auto& r : t.resources()) directions += r.name.find("->") != std::string::npos ? 1 : 0;
    EXPECT_EQ(2 * linkCount(spec), directions) << spec.name;
  }
  const TopologySpec million = resized(*findPreset("dgx-h100"), kMaxTopologyRanks);
  EXPECT_EQ(linkCount(million), kMaxTopologyRanks);
  const std::int64_t needed = linkCount(million) * kTopologyBytesPerLink;
  EXPECT_NO_THROW(requireTopologyFits(million, needed));
  try {
    requireTopologyFits(million, needed - 1);
    FAIL() << "a topology larger than the memory was accepted";
  } catch (const InvalidArgument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(std::to_string(kMaxTopologyRanks) + " links"), std::string::npos) << what;
    EXPECT_NE(what.find("available"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace cclab::sim
