// Reading an NCCL topology dump (nccl_topology.h): the XML parsed by pugixml, each element and value
// checked, into an NcclSystem. What a system becomes is nccl_topology.cc's.
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <pugixml.hpp>
#include <set>
#include <sstream>

#include "collectives/core/input_file.h"
#include "sim/link_specs.h"
#include "sim/nccl_topology.h"

namespace cclab::sim {
namespace {

// Most GPUs, NICs and PCI elements one dump may hold (a node has tens; this only bounds bad input).
constexpr std::size_t kMaxElements = 4096;

struct Reader {
  const std::string& source;
  const std::string& text;
  NcclSystem out;
  std::size_t elements = 0;

  [[noreturn]] void fail(const pugi::xml_node& n, const std::string& attr, const std::string& what) const {
    const auto at = static_cast<std::size_t>(std::max<std::ptrdiff_t>(0, n.offset_debug()));
    const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(std::min(at, text.size())), '\n');
    throw TopologyError(fmt::format("nccl topology '{}' line {}: <{}>{} {}", source, line, n.name(),
                                    attr.empty() ? "" : " attribute '" + attr + "'", what));
  }
  std::string str(const pugi::xml_node& n, const char* attr, bool required) const {
    const pugi::xml_attribute a = n.attribute(attr);
    if (!a) {
      if (required) fail(n, attr, "is missing");
      return {};
    }
    return a.value();
  }
  // A whole decimal (or 0x hex when hex) integer in [lo, hi].
  long long integer(const pugi::xml_node& n, const char* attr, long long lo, long long hi, bool required, long long fallback,
                    bool hex = false) const {
    const std::string v = str(n, attr, required);
    if (v.empty() && !required) return fallback;
    const bool isHex = hex && v.size() > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X');
    errno = 0;
    char* end = nullptr;
    const long long x = std::strtoll(v.c_str() + (isHex ? 2 : 0), &end, isHex ? 16 : 10);
    if (v.empty() || errno != 0 || *end != '\0' || x < lo || x > hi)
      fail(n, attr, fmt::format("must be {}an integer in {}..{} (got '{}')", hex ? "a hex or decimal " : "", lo, hi, v));
    return x;
  }
  double number(const pugi::xml_node& n, const char* attr, double lo, double hi) const {
    const std::string v = str(n, attr, true);
    errno = 0;
    char* end = nullptr;
    const double x = std::strtod(v.c_str(), &end);
    if (v.empty() || errno != 0 || *end != '\0' || !std::isfinite(x) || x < lo || x > hi)
      fail(n, attr, fmt::format("must be a number in {}..{} (got '{}')", lo, hi, v));
    return x;
  }
  // link_speed "16.0 GT/s PCIe", "32.0 GT/s", "8 GT/s"; link_width "16" (0 in virtual machines).
  NcclPciLink link(const pugi::xml_node& n) const {
    NcclPciLink l;
    const std::string speed = str(n, "link_speed", false);
    if (!speed.empty()) {
      char* end = nullptr;
      errno = 0;
      l.gtPerSecond = std::strtod(speed.c_str(), &end);
      const std::string rest = end;
      if (end == speed.c_str() || errno != 0 || (rest != " GT/s" && rest != " GT/s PCIe") || !specs::pciePerLane(l.gtPerSecond))
        fail(n, "link_speed", "must be a PCIe rate: 2.5, 5, 8, 16, 32 or 64 GT/s (got '" + speed + "')");
    }
    l.width = static_cast<int>(integer(n, "link_width", 0, 32, false, 0));
    if (l.width != 0 && (l.width & (l.width - 1)) != 0) fail(n, "link_width", "must be 0, 1, 2, 4, 8, 16 or 32");
    return l;
  }

  void count(const pugi::xml_node& n) {
    if (++elements > kMaxElements) fail(n, "", fmt::format("is past {} elements: not a node's topology", kMaxElements));
  }

  void cpu(const pugi::xml_node& n) {
    count(n);
    const int numa = static_cast<int>(integer(n, "numaid", -1, 1 << 20, false, -1));
    const int id = static_cast<int>(out.devices.size());
    out.devices.push_back({fmt::format("cpu{}", numa < 0 ? id : numa), -1, id, {}});
    children(n, id, id);
  }
  void children(const pugi::xml_node& n, int parent, int cpuId) {
    for (const pugi::xml_node& c : n.children()) {
      if (c.type() != pugi::node_element) continue;
      const std::string name = c.name();
      if (name == "pci")
        pci(c, parent, cpuId);
      else if (name == "gpu")
        gpu(c, parent);
      else if (name == "nic")
        nic(c, parent);
      else
        fail(c, "", fmt::format("is not an element NCCL writes inside <{}> (pci, gpu, nic)", n.name()));
    }
  }
  void pci(const pugi::xml_node& n, int parent, int cpuId) {
    count(n);
    std::string bus = str(n, "busid", true);
    std::transform(bus.begin(), bus.end(), bus.begin(), [](unsigned char c) { return std::tolower(c); });
    // A bus id names one device: links (an NVLink's target, a NIC's place) are resolved by it.
    if (!busIds_.insert(bus).second) fail(n, "busid", "'" + bus + "' appears twice: one device per bus id");
    const int id = static_cast<int>(out.devices.size());
    out.devices.push_back({bus, parent, cpuId, link(n)});
    pciDevice_ = static_cast<unsigned>(integer(n, "device", 0, 0xffff, false, 0, true));
    children(n, id, cpuId);
  }
  void gpu(const pugi::xml_node& n, int device) {
    count(n);
    NcclGpu g;
    g.dev = static_cast<int>(integer(n, "dev", 0, 1 << 16, true, 0));
    g.rank = static_cast<int>(integer(n, "rank", -1, 1 << 30, false, -1));
    g.sm = static_cast<int>(integer(n, "sm", 10, 200, true, 0));
    g.device = device;
    g.pciDevice = pciDevice_;
    for (const pugi::xml_node& c : n.children()) {
      if (c.type() != pugi::node_element) continue;
      const std::string name = c.name();
      if (name == "c2c") continue;  // the Grace-Hopper CPU link: not modelled
      if (name != "nvlink") fail(c, "", "is not an element NCCL writes inside <gpu> (nvlink, c2c)");
      count(c);
      NcclNvLink l;
      l.target = str(c, "target", true);
      std::transform(l.target.begin(), l.target.end(), l.target.begin(), [](unsigned char ch) { return std::tolower(ch); });
      if (device >= 0 && l.target == out.devices[static_cast<std::size_t>(device)].busId)
        fail(c, "target", "'" + l.target + "' is the GPU's own bus id: an NVLink to itself");
      l.count = static_cast<int>(integer(c, "count", 1, 64, true, 0));
      l.toGpuClass = str(c, "tclass", false).rfind("0x03", 0) == 0;
      g.nvlinks.push_back(l);
    }
    for (const auto& other : out.gpus)
      if (other.dev == g.dev) fail(n, "dev", fmt::format("{} appears twice", g.dev));
    out.gpus.push_back(std::move(g));
  }
  void nic(const pugi::xml_node& n, int device) {
    count(n);
    for (const pugi::xml_node& c : n.children()) {
      if (c.type() != pugi::node_element) continue;
      if (std::string(c.name()) != "net") fail(c, "", "is not an element NCCL writes inside <nic> (net)");
      count(c);
      NcclNet net;
      net.name = str(c, "name", false);
      net.dev = static_cast<int>(integer(c, "dev", 0, 1 << 16, false, static_cast<long long>(out.nets.size())));
      // Mb/s; 1 Gb/s .. 100 Tb/s
      net.speedMbps = number(c, "speed", 1000, 1e8);
      net.device = device;
      out.nets.push_back(net);
    }
  }
  unsigned pciDevice_ = 0;
  std::set<std::string> busIds_;
};

[[noreturn]] void refuse(const NcclSystem& s, const std::string& what) { throw TopologyError("nccl topology '" + s.source + "': " + what); }

}  // namespace

GBps NcclPciLink::bandwidth() const {
  const auto lane = specs::pciePerLane(gtPerSecond);
  return lane ? *lane * (width == 0 ? 16 : width) : 0;
}

NcclSystem parseNcclSystem(const std::string& xml, const std::string& source) {
  pugi::xml_document doc;
  const pugi::xml_parse_result r = doc.load_buffer(xml.data(), xml.size());
  if (!r) {
    const auto line =
        1 + std::count(xml.begin(), xml.begin() + std::min<std::ptrdiff_t>(r.offset, static_cast<std::ptrdiff_t>(xml.size())), '\n');
    throw TopologyError(fmt::format("nccl topology '{}' line {}: not well-formed XML: {}", source, line, r.description()));
  }
  Reader rd{source, xml, {}, 0, 0};
  rd.out.source = source;
  const pugi::xml_node system = doc.document_element();
  // pugixml reads a fragment of several top-level elements; NCCL writes one <system> per dump.
  for (pugi::xml_node n = system.next_sibling(); n; n = n.next_sibling())
    if (n.type() == pugi::node_element) rd.fail(n, "", "follows the <system> element: a dump holds one document");
  if (std::string(system.name()) != "system")
    throw TopologyError("nccl topology '" + source + "': the root element is <" + std::string(system.name()) + ">, not <system>");
  rd.integer(system, "version", 0, 1 << 20, true, 0);
  for (const pugi::xml_node& c : system.children()) {
    if (c.type() != pugi::node_element) continue;
    if (std::string(c.name()) != "cpu") rd.fail(c, "", "is not an element NCCL writes inside <system> (cpu)");
    rd.cpu(c);
  }
  NcclSystem& s = rd.out;
  if (s.gpus.empty()) refuse(s, "no <gpu> element: a dump names the GPUs NCCL ran on");
  std::sort(s.gpus.begin(), s.gpus.end(), [](const NcclGpu& a, const NcclGpu& b) { return a.dev < b.dev; });
  for (const auto& g : s.gpus)
    if (g.sm != s.gpus[0].sm)
      refuse(s, fmt::format("GPUs of different SM versions ({} and {}): one architecture per node", g.sm, s.gpus[0].sm));
  return s;
}

NcclSystem loadNcclSystem(const std::string& path) {
  std::string text;
  try {
    text = readInputFile(path, "nccl topology '" + path + "'");
  } catch (const InvalidArgument& e) {
    throw TopologyError(e.what());
  }
  return parseNcclSystem(text, path);
}

}  // namespace cclab::sim
