#include "sim/topology_json.h"

#include <filesystem>
#include <fstream>
#include <set>

#include "collectives/conventions/output_file.h"
#include "sim/json_file.h"
#include "sim/nccl_topology.h"
#include "sim/presets.h"

namespace cclab::sim {
namespace {

using nlohmann::json;

[[noreturn]] void bad(const std::string& field, const std::string& what) {
  throw TopologyError("topology field '" + field + "' " + what);
}

const json* member(const json& obj, const std::string& key) {
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

std::string getString(const json& obj, const std::string& key, const std::string& field, bool required,
                      const std::string& fallback = "") {
  const json* v = member(obj, key);
  if (!v) {
    if (required) bad(field, "is missing");
    return fallback;
  }
  if (!v->is_string()) bad(field, "must be a string (got " + v->dump() + ")");
  return v->get<std::string>();
}

double getNumber(const json& obj, const std::string& key, const std::string& field, bool required, double fallback) {
  const json* v = member(obj, key);
  if (!v) {
    if (required) bad(field, "is missing");
    return fallback;
  }
  if (!v->is_number()) bad(field, "must be a number (got " + v->dump() + ")");
  return v->get<double>();
}

int getInt(const json& obj, const std::string& key, const std::string& field, bool required, int fallback) {
  const json* v = member(obj, key);
  if (!v) {
    if (required) bad(field, "is missing");
    return fallback;
  }
  if (!v->is_number_integer()) bad(field, "must be an integer (got " + v->dump() + ")");
  const auto x = v->get<std::int64_t>();
  if (x < 0 || x > (std::int64_t{1} << 30)) bad(field, "is out of range 0..2^30 (got " + v->dump() + ")");
  return static_cast<int>(x);
}

void onlyKeys(const json& obj, const std::string& where, std::initializer_list<const char*> keys) {
  std::set<std::string> allowed(keys.begin(), keys.end());
  for (auto it = obj.begin(); it != obj.end(); ++it)
    if (!allowed.contains(it.key())) bad(where + it.key(), "is not a known field");
}

}  // namespace

TopologySpec parseTopology(const json& j) {
  if (!j.is_object()) throw TopologyError("topology must be a JSON object");
  onlyKeys(j, "", {"name", "kind", "ranks", "nodes", "gpus_per_node", "nics_per_node", "gpus_per_switch",
                   "protocol_efficiency", "ll_protocol", "ll128_protocol", "compute_capability", "nvls_gbps", "channels", "classes", "compute", "links", "comment"});
  TopologySpec s;
  const std::string kind = getString(j, "kind", "kind", true);
  s.kind = parseTopologyKind(kind);
  s.name = getString(j, "name", "name", false, kind);
  if (s.kind == TopologyKind::Cluster) {
    s.nodes = getInt(j, "nodes", "nodes", true, 1);
    s.gpusPerNode = getInt(j, "gpus_per_node", "gpus_per_node", true, 0);
    s.nicsPerNode = getInt(j, "nics_per_node", "nics_per_node", false, 1);
    // The product is checked before it is formed: two in-range factors can overflow int.
    if (std::int64_t{s.nodes} * s.gpusPerNode > (std::int64_t{1} << 30))
      bad("gpus_per_node", "is out of range: nodes * gpus_per_node exceeds 2^30");
    s.ranks = s.nodes * s.gpusPerNode;
    if (member(j, "ranks") && getInt(j, "ranks", "ranks", false, 0) != s.ranks)
      bad("ranks", "must equal nodes * gpus_per_node for kind 'cluster'");
  } else {
    s.ranks = getInt(j, "ranks", "ranks", true, 0);
  }
  if (s.kind == TopologyKind::Pcie) s.gpusPerSwitch = getInt(j, "gpus_per_switch", "gpus_per_switch", true, 0);
  s.protocolEfficiency = getNumber(j, "protocol_efficiency", "protocol_efficiency", false, 1.0);
  if (const json* ll = member(j, "ll_protocol")) {
    if (!ll->is_boolean()) bad("ll_protocol", "must be true or false (got " + ll->dump() + ")");
    s.llProtocol = ll->get<bool>();
  }
  if (const json* ll = member(j, "ll128_protocol")) {
    if (!ll->is_boolean()) bad("ll128_protocol", "must be true or false (got " + ll->dump() + ")");
    s.ll128Protocol = ll->get<bool>();
  }
  s.computeCapability = getInt(j, "compute_capability", "compute_capability", false, 0);
  s.nvlsBandwidth = getNumber(j, "nvls_gbps", "nvls_gbps", false, 0.0);
  s.channels = getInt(j, "channels", "channels", false, 0);
  const json* classes = member(j, "classes");
  if (!classes) bad("classes", "is missing");
  if (!classes->is_object()) bad("classes", "must be an object of name: {latency_us, bandwidth_gbps}");
  for (auto it = classes->begin(); it != classes->end(); ++it) {
    const std::string f = "classes." + it.key();
    if (!it->is_object()) bad(f, "must be an object {latency_us, bandwidth_gbps}");
    onlyKeys(*it, f + ".", {"latency_us", "bandwidth_gbps", "efficiency", "comment"});
    LinkClass c;
    c.latency = getNumber(*it, "latency_us", f + ".latency_us", false, 0.0);
    c.bandwidth = getNumber(*it, "bandwidth_gbps", f + ".bandwidth_gbps", true, 0.0);
    c.efficiency = getNumber(*it, "efficiency", f + ".efficiency", false, 1.0);
    s.classes[it.key()] = c;
  }
  if (const json* c = member(j, "compute")) {
    if (!c->is_object()) bad("compute", "must be an object {reduce_gbps, copy_gbps, cores}");
    onlyKeys(*c, "compute.", {"reduce_gbps", "copy_gbps", "cores", "wake_us", "launch_us", "proxy_us", "comment"});
    s.compute.reduceBandwidth = getNumber(*c, "reduce_gbps", "compute.reduce_gbps", false, 0.0);
    s.compute.copyBandwidth = getNumber(*c, "copy_gbps", "compute.copy_gbps", false, 0.0);
    s.compute.cores = getInt(*c, "cores", "compute.cores", false, 0);
    s.compute.wakeLatency = getNumber(*c, "wake_us", "compute.wake_us", false, 0.0);
    s.compute.launchLatency = getNumber(*c, "launch_us", "compute.launch_us", false, 0.0);
    s.compute.proxyLatency = getNumber(*c, "proxy_us", "compute.proxy_us", false, 0.0);
  }
  if (s.kind == TopologyKind::Graph) {
    if (const json* nodes = member(j, "nodes")) {
      if (!nodes->is_array()) bad("nodes", "must be an array of {name, class} for kind 'graph'");
      for (std::size_t i = 0; i < nodes->size(); ++i) {
        const std::string f = "nodes[" + std::to_string(i) + "]";
        const json& n = (*nodes)[i];
        if (!n.is_object()) bad(f, "must be an object {name, class}");
        onlyKeys(n, f + ".", {"name", "class", "comment"});
        s.graphNodes.push_back({getString(n, "name", f + ".name", true), getString(n, "class", f + ".class", false)});
      }
    }
    const json* links = member(j, "links");
    if (!links) bad("links", "is missing (kind 'graph' needs it)");
    if (!links->is_array()) bad("links", "must be an array of {a, b, class}");
    for (std::size_t i = 0; i < links->size(); ++i) {
      const std::string f = "links[" + std::to_string(i) + "]";
      const json& l = (*links)[i];
      if (!l.is_object()) bad(f, "must be an object {a, b, class}");
      onlyKeys(l, f + ".", {"a", "b", "class", "comment"});
      s.graphLinks.push_back(
          {getString(l, "a", f + ".a", true), getString(l, "b", f + ".b", true), getString(l, "class", f + ".class", true)});
    }
  } else if (member(j, "links")) {
    bad("links", "is only allowed for kind 'graph'");
  }
  checkSpec(s);
  return s;
}

TopologySpec loadTopologyFile(const std::string& path) {
  json j;
  try {
    j = readJsonFile(path, "topology");
  } catch (const TopologyError&) {
    throw;
  } catch (const InvalidArgument& e) {
    throw TopologyError(e.what());
  }
  try {
    return parseTopology(j);
  } catch (const TopologyError& e) {
    throw TopologyError("topology file '" + path + "': " + e.what());
  }
}

json toJson(const TopologySpec& s) {
  json j;
  j["name"] = s.name;
  j["kind"] = name(s.kind);
  if (s.kind == TopologyKind::Cluster) {
    j["nodes"] = s.nodes;
    j["gpus_per_node"] = s.gpusPerNode;
    j["nics_per_node"] = s.nicsPerNode;
  } else {
    j["ranks"] = s.ranks;
  }
  if (s.kind == TopologyKind::Pcie) j["gpus_per_switch"] = s.gpusPerSwitch;
  j["protocol_efficiency"] = s.protocolEfficiency;
  if (s.llProtocol) j["ll_protocol"] = true;
  if (s.ll128Protocol) j["ll128_protocol"] = true;
  if (s.computeCapability > 0) j["compute_capability"] = s.computeCapability;
  if (s.nvlsBandwidth > 0) j["nvls_gbps"] = s.nvlsBandwidth;
  if (s.channels > 0) j["channels"] = s.channels;
  json classes = json::object();
  for (const auto& [name, c] : s.classes) {
    classes[name] = {{"latency_us", c.latency}, {"bandwidth_gbps", c.bandwidth}};
    if (c.efficiency != 1.0) classes[name]["efficiency"] = c.efficiency;
  }
  j["classes"] = classes;
  j["compute"] = {{"reduce_gbps", s.compute.reduceBandwidth}, {"copy_gbps", s.compute.copyBandwidth}};
  if (s.compute.cores > 0) j["compute"]["cores"] = s.compute.cores;
  if (s.compute.wakeLatency > 0) j["compute"]["wake_us"] = s.compute.wakeLatency;
  if (s.compute.launchLatency > 0) j["compute"]["launch_us"] = s.compute.launchLatency;
  if (s.compute.proxyLatency > 0) j["compute"]["proxy_us"] = s.compute.proxyLatency;
  if (s.kind == TopologyKind::Graph) {
    json nodes = json::array(), links = json::array();
    for (const auto& n : s.graphNodes) {
      json o = {{"name", n.name}};
      if (!n.cls.empty()) o["class"] = n.cls;
      nodes.push_back(o);
    }
    for (const auto& l : s.graphLinks) links.push_back({{"a", l.a}, {"b", l.b}, {"class", l.cls}});
    j["nodes"] = nodes;
    j["links"] = links;
  }
  return j;
}

void saveTopologyFile(const TopologySpec& spec, const std::string& path) {
  conventions::writeFileAtomically(path, toJson(spec).dump(2) + "\n");  // whole or not at all; the old file kept on failure
}

TopologySpec resolveTopology(const std::string& presetOrPath) {
  if (auto p = findPreset(presetOrPath)) return *p;
  if (auto x = resolveNcclTopology(presetOrPath, 0)) return *x;  // NCCL topology dump(s), one node each
  std::error_code ec;
  if (std::filesystem::exists(presetOrPath, ec)) return loadTopologyFile(presetOrPath);
  std::string names;
  for (const auto& n : presetNames()) names += (names.empty() ? "" : ", ") + n;
  throw TopologyError("--topo '" + presetOrPath + "' is neither a preset (" + names + ") nor a file");
}

}  // namespace cclab::sim
