// NCCL topology dumps (sim/nccl_topology.h) read into cclab topologies. The dumps under
// tests/sim/data/nccl/ are public, each with its source here; the tests check that each parses into
// what the dump itself describes (GPU count, NVLink bandwidth, NICs and which GPUs share each).
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "sim/link_specs.h"
#include "sim/nccl_topology.h"
#include "sim/presets.h"
#include "sim/topology.h"
#include "sim/topology_json.h"

namespace cclab::sim {
namespace {

std::string dataPath(const std::string& name) { return std::string(CCLAB_SOURCE_DIR) + "/tests/sim/data/nccl/" + name; }
std::string slurpFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// IBM Cloud VPC documentation, "NVIDIA H100 cluster network profile", section "Tested NCCL
// configuration" (https://cloud.ibm.com/docs/vpc?topic=vpc-cluster-network-h100-profile): the
// topology of a gx3d-160x1792x8h100 virtual server, 8 H100 SXM5 (PCI device 0x2330, sm 90) with 18
// NVLinks each to four NVSwitches (bus ids f3..f6, class 0x068000), and 8 ConnectX-7 ports at
// 200 Gb/s, each on the virtual PCIe bridge of one GPU (GPU dev i with mlx5_(7-i)).
const char* kIbm = "ibm-gx3d-h100.xml";

TEST(NcclTopology, IbmH100DumpIsEightGpusOnNvswitchWithOneNicPerGpu) {
  const NcclSystem s = loadNcclSystem(dataPath(kIbm));
  ASSERT_EQ(s.gpus.size(), 8u);
  EXPECT_EQ(s.nets.size(), 8u);
  const NcclNodeSummary sum = summarize(s);
  EXPECT_TRUE(sum.nvswitch);
  EXPECT_EQ(sum.sm, 90);
  EXPECT_EQ(sum.nvlinkPerGpu, 18 * 25.0);  // 5+5+4+4 NVLink4 links of 25 GB/s
  ASSERT_EQ(sum.gpusOfNic.size(), 8u);
  // Nets in document order are mlx5_7, mlx5_6, ..., mlx5_0; mlx5_(7-i) shares GPU i's bridge.
  for (int n = 0; n < 8; ++n) {
    EXPECT_EQ(s.nets[static_cast<std::size_t>(n)].name, "mlx5_" + std::to_string(7 - n));
    EXPECT_EQ(sum.gpusOfNic[static_cast<std::size_t>(n)], std::vector<int>{n}) << "NIC " << n;
    EXPECT_DOUBLE_EQ(sum.nicBandwidth[static_cast<std::size_t>(n)], 25.0);  // 200 Gb/s
  }
  // link_width 0 (a virtual machine's) is read as x16: PCIe Gen5 x16.
  EXPECT_DOUBLE_EQ(sum.gpuNicPcie, 16 * 32.0 * 128 / 130 / 8);
}

TEST(NcclTopology, OneNvswitchNodeIsTheSwitchKindAsTheDgxH100Preset) {
  const TopologySpec t = ncclTopology({loadNcclSystem(dataPath(kIbm))});
  const TopologySpec dgx = *findPreset("dgx-h100");
  EXPECT_EQ(t.kind, TopologyKind::Switch);
  EXPECT_EQ(t.ranks, 8);
  EXPECT_EQ(t.classes.at("link"), dgx.classes.at("link"));  // same NVLink4 port, from the dump's link counts
  EXPECT_EQ(t.compute.reduceBandwidth, dgx.compute.reduceBandwidth);  // H100 SXM5 HBM3 from the PCI device id
  EXPECT_EQ(t.computeCapability, 90);
  EXPECT_TRUE(t.ll128Protocol);
  EXPECT_EQ(t.nvlsBandwidth, dgx.nvlsBandwidth);
  const Topology topo(t);
  EXPECT_EQ(topo.nranks(), 8);
}

TEST(NcclTopology, CopiesOfANodeAreAClusterWithTheDumpsNics) {
  const NcclSystem s = loadNcclSystem(dataPath(kIbm));
  const TopologySpec t = ncclTopology({s, s, s, s});
  EXPECT_EQ(t.kind, TopologyKind::Cluster);
  EXPECT_EQ(t.nodes, 4);
  EXPECT_EQ(t.gpusPerNode, 8);
  EXPECT_EQ(t.nicsPerNode, 8);
  EXPECT_DOUBLE_EQ(t.classes.at("nic").bandwidth, 25.0);
  EXPECT_DOUBLE_EQ(t.classes.at("intra").bandwidth, 450.0);
  const Topology topo(t);
  EXPECT_EQ(topo.nranks(), 32);
  // The same through --topo with --nodes.
  const auto viaArg = resolveNcclTopology(dataPath(kIbm), 4);
  ASSERT_TRUE(viaArg);
  EXPECT_EQ(*viaArg, t);
}

// NVIDIA/nccl-tests issue 256, "NCCL topology on the VM of H200"
// (https://github.com/NVIDIA/nccl-tests/issues/256): the bare-metal dump of an 8 x H200 server
// (PCI device 0x2335, sm 90), quoted in the thread up to the first NIC of the second CPU, where the quote
// stops. As quoted it is cut off inside an element, so it is refused; its first CPU is whole: three
// GPUs with 18 NVLinks each, three ConnectX-7 at 400 Gb/s, each NIC on the PCIe switch of one GPU.
const char* kH200 = "nccl-tests-256-h200-truncated.xml";

TEST(NcclTopology, TheTruncatedH200QuoteIsRefusedInOneLine) {
  try {
    loadNcclSystem(dataPath(kH200));
    FAIL() << "a dump cut off inside an element must be refused";
  } catch (const TopologyError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("not well-formed XML"), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
}

TEST(NcclTopology, TheH200DumpsFirstCpuPairsEachNicWithOneGpu) {
  // The whole first <cpu> element of the quote, closed as the dump closes it.
  const std::string text = slurpFile(dataPath(kH200));
  const auto end = text.find("</cpu>");
  ASSERT_NE(end, std::string::npos);
  const NcclSystem s = parseNcclSystem(text.substr(0, end + 6) + "\n</system>\n", "h200-first-cpu");
  ASSERT_EQ(s.gpus.size(), 3u);
  ASSERT_EQ(s.nets.size(), 3u);
  const NcclNodeSummary sum = summarize(s);
  EXPECT_TRUE(sum.nvswitch);
  EXPECT_EQ(sum.nvlinkPerGpu, 450.0);
  // mlx5_0 shares switch 0000:16 with GPU 0, mlx5_1 0000:27 with GPU 1, mlx5_2 0000:38 with GPU 2.
  for (int n = 0; n < 3; ++n) {
    EXPECT_EQ(sum.gpusOfNic[static_cast<std::size_t>(n)], std::vector<int>{n});
    EXPECT_DOUBLE_EQ(sum.nicBandwidth[static_cast<std::size_t>(n)], 50.0);  // 400 Gb/s
  }
  EXPECT_DOUBLE_EQ(sum.gpuNicPcie, 16 * 32.0 * 128 / 130 / 8);
  const TopologySpec t = ncclTopology({s});
  EXPECT_EQ(t.compute.reduceBandwidth, 4800.0);  // H200: HBM3e 4.8 TB/s from the device id
}

// NVIDIA/nccl-tests issue 329, "Running nccl-tests on two docker on same host - uses same rank 0"
// (https://github.com/NVIDIA/nccl-tests/issues/329): the dump of a host with one NVIDIA T600 (sm 75,
// PCIe Gen3 x16) and one ConnectX RoCE port at 100 Gb/s (Gen3 x16), both right under CPU 1: a PCIe
// node with a NIC and no NVLink.
const char* kT600 = "nccl-tests-329-t600-roce.xml";

TEST(NcclTopology, TheT600DumpIsAPcieNodeWithOneNic) {
  const NcclSystem s = loadNcclSystem(dataPath(kT600));
  ASSERT_EQ(s.gpus.size(), 1u);
  ASSERT_EQ(s.nets.size(), 1u);
  EXPECT_EQ(s.nets[0].name, "roce0");
  const NcclNodeSummary sum = summarize(s);
  EXPECT_FALSE(sum.nvswitch);
  EXPECT_EQ(sum.nvlinkPairs, 0);
  EXPECT_EQ(sum.sm, 75);
  EXPECT_EQ(sum.gpusOfNic[0], std::vector<int>{0});
  EXPECT_DOUBLE_EQ(sum.nicBandwidth[0], 12.5);                 // 100 Gb/s
  EXPECT_DOUBLE_EQ(sum.gpuNicPcie, 16 * 8.0 * 128 / 130 / 8);  // PCIe Gen3 x16
  // Alone: one rank.
  EXPECT_EQ(Topology(ncclTopology({s})).nranks(), 1);
  // Two such hosts (the two containers, as two nodes): one rank each, through GPU's PCIe link,
  // the CPU, the NIC's link and the NIC; the NIC is the narrowest.
  const TopologySpec t = ncclTopology({s, s});
  EXPECT_EQ(t.kind, TopologyKind::Graph);
  EXPECT_FALSE(t.ll128Protocol);
  const Topology topo(t);
  ASSERT_EQ(topo.nranks(), 2);
  const Route r = topo.route(0, 1);
  // rank0 -> cpu1 -> the NIC card -> its port -> fabric -> port -> card -> cpu1 -> rank1
  EXPECT_EQ(r.resources.size(), 8u);
  EXPECT_NEAR(r.bottleneck, 12.5 * specs::kNicEfficiency, 1e-9);
}

// NVIDIA/nccl issue 2397, "ncclCommShrink leads to IB transport errors ..."
// (https://github.com/NVIDIA/nccl/issues/2397): the dumps of its two hosts, each 2 x A100 80GB PCIe
// (device 0x20b5, sm 80, Gen4 x16), one GPU under each CPU, no NVLink, and one dual-port ConnectX-6 Dx
// (two 100 Gb/s ports) under CPU 0, on a Gen4 x8 link in the first host and x16 in the second.
const char* kHost11 = "nccl-2397-a100-pcie-host11.xml";
const char* kHost13 = "nccl-2397-a100-pcie-host13.xml";

TEST(NcclTopology, TheA100PcieHostsAreTwoGpusOnTwoSocketsSharingADualPortNic) {
  const NcclSystem a = loadNcclSystem(dataPath(kHost11)), b = loadNcclSystem(dataPath(kHost13));
  ASSERT_EQ(a.gpus.size(), 2u);
  ASSERT_EQ(a.nets.size(), 2u);  // two ports of one card
  const NcclNodeSummary sa = summarize(a), sb = summarize(b);
  EXPECT_FALSE(sa.nvswitch);
  EXPECT_EQ(sa.nvlinkPairs, 0);
  // GPU 0 shares CPU 0 with the card; GPU 1 crosses the socket link: one port each.
  EXPECT_EQ(sa.gpusOfNic[0], std::vector<int>{0});
  EXPECT_EQ(sa.gpusOfNic[1], std::vector<int>{1});
  EXPECT_DOUBLE_EQ(sa.nicBandwidth[0], 12.5);
  const GBps gen4Lane = 16.0 * 128 / 130 / 8;
  EXPECT_DOUBLE_EQ(sa.gpuNicPcie, 8 * gen4Lane);   // the card's x8 link
  EXPECT_DOUBLE_EQ(sb.gpuNicPcie, 16 * gen4Lane);  // x16 in the other host
  // The two files as the two nodes they are: a graph of 4 ranks, the nodes joined by their NIC ports.
  const TopologySpec t = ncclTopology({a, b});
  EXPECT_EQ(t.kind, TopologyKind::Graph);
  EXPECT_EQ(t.compute.reduceBandwidth, 1935.0);  // A100 80GB PCIe HBM2e
  EXPECT_FALSE(t.ll128Protocol);                 // no NVLink
  const Topology topo(t);
  ASSERT_EQ(topo.nranks(), 4);
  // Inside a host: GPU, CPU 0, the socket link, CPU 1, GPU.
  const Route inside = topo.route(0, 1);
  EXPECT_EQ(inside.resources.size(), 3u);
  EXPECT_NEAR(inside.bottleneck, 16 * gen4Lane * specs::kPcieEfficiency, 1e-9);
  // Across: the 100 Gb/s port is the narrowest.
  EXPECT_NEAR(topo.route(0, 2).bottleneck, 12.5 * specs::kNicEfficiency, 1e-9);
  EXPECT_NEAR(topo.route(1, 3).bottleneck, 12.5 * specs::kNicEfficiency, 1e-9);
  // Through --topo: both files, one node each.
  const auto viaArg = resolveNcclTopology(dataPath(kHost11) + "," + dataPath(kHost13), 0);
  ASSERT_TRUE(viaArg);
  EXPECT_EQ(viaArg->ranks, 4);
}

// Synthetic trees for what the public dumps above do not cover: PCIe-only nodes, NVLink between GPUs,
// GPUs sharing a NIC, and errors.
std::string pcieBox(int gpus, int nics) {
  std::string x = "<system version=\"1\">\n <cpu numaid=\"0\">\n";
  for (int sw = 0; sw < 2; ++sw) {
    x += "  <pci busid=\"0000:" + std::to_string(10 + sw) + ":00.0\" class=\"0x060400\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\">\n";
    for (int g = sw * gpus / 2; g < (sw + 1) * gpus / 2; ++g)
      x += "   <pci busid=\"0000:" + std::to_string(20 + g) + ":00.0\" class=\"0x030000\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\"><gpu dev=\"" +
           std::to_string(g) + "\" sm=\"89\" rank=\"" + std::to_string(g) + "\"/></pci>\n";
    if (sw < nics)
      x += "   <pci busid=\"0000:" + std::to_string(40 + sw) + ":00.0\" class=\"0x020000\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\"><nic><net name=\"mlx5_" +
           std::to_string(sw) + "\" dev=\"" + std::to_string(sw) + "\" speed=\"100000\"/></nic></pci>\n";
    x += "  </pci>\n";
  }
  return x + " </cpu>\n</system>\n";
}

TEST(NcclTopology, APcieBoxIsItsOwnTree) {
  const NcclSystem s = parseNcclSystem(pcieBox(8, 2), "pcie-box");
  const NcclNodeSummary sum = summarize(s);
  EXPECT_FALSE(sum.nvswitch);
  EXPECT_EQ(sum.nvlinkPairs, 0);
  EXPECT_EQ(sum.gpusOfNic[0], (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(sum.gpusOfNic[1], (std::vector<int>{4, 5, 6, 7}));
  const TopologySpec t = ncclTopology({s});
  EXPECT_EQ(t.kind, TopologyKind::Graph);
  EXPECT_FALSE(t.ll128Protocol);  // PCIe: no LL128
  const Topology topo(t);
  ASSERT_EQ(topo.nranks(), 8);
  // GPU 0 to GPU 1: both links to their switch (two hops); GPU 0 to GPU 4: through the CPU (four).
  const GBps gen4x16 = 16 * 16.0 * 128 / 130 / 8 * specs::kPcieEfficiency;
  EXPECT_EQ(topo.route(0, 1).resources.size(), 2u);
  EXPECT_EQ(topo.route(0, 4).resources.size(), 4u);
  EXPECT_NEAR(topo.route(0, 4).bottleneck, gen4x16, 1e-9);
  // Two nodes: joined through their NICs on a fabric; rank 8 is the second node's GPU 0.
  const TopologySpec two = ncclTopology({s, s});
  const Topology t2(two);
  ASSERT_EQ(t2.nranks(), 16);
  const Route r = t2.route(0, 8);
  bool viaNic = false;
  for (int id : r.resources) viaNic = viaNic || t2.isNic(id);
  EXPECT_TRUE(viaNic);
  EXPECT_NEAR(r.bottleneck, 12.5 * specs::kNicEfficiency, 1e-9);  // 100 Gb/s
}

TEST(NcclTopology, NvlinkBetweenGpusIsADirectLink) {
  // Two A40-style GPUs (sm 86) joined by an NVLink bridge of 4 links, on separate CPUs.
  const std::string x =
      "<system version=\"1\"><cpu numaid=\"0\"><pci busid=\"0000:01:00.0\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\">"
      "<gpu dev=\"0\" sm=\"86\"><nvlink target=\"0000:81:00.0\" count=\"4\" tclass=\"0x030000\"/></gpu></pci></cpu>"
      "<cpu numaid=\"1\"><pci busid=\"0000:81:00.0\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\">"
      "<gpu dev=\"1\" sm=\"86\"><nvlink target=\"0000:01:00.0\" count=\"4\" tclass=\"0x030000\"/></gpu></pci></cpu></system>";
  const NcclSystem s = parseNcclSystem(x, "bridge");
  EXPECT_EQ(summarize(s).nvlinkPairs, 1);
  const Topology topo(ncclTopology({s}));
  const Route r = topo.route(0, 1);
  ASSERT_EQ(r.resources.size(), 1u);
  EXPECT_NEAR(r.bottleneck, 4 * 14.0625 * specs::kNvlinkEfficiency, 1e-9);
}

TEST(NcclTopology, OneRanksOwnDumpLeavesOutNvlinksToGpusItDoesNotHold) {
  // The shape of the dump one rank writes before NCCL fuses the node's: one GPU whose NVLink bridge
  // leads to a GPU (tclass 0x030000) not in the file, and a NIC right under the other CPU.
  const std::string x =
      "<system version=\"1\"><cpu numaid=\"1\"><pci busid=\"0000:99:00.0\" class=\"0x030000\" device=\"0x2230\" "
      "link_speed=\"16.0 GT/s PCIe\" link_width=\"16\"><gpu dev=\"0\" sm=\"86\" rank=\"0\" gdr=\"1\">"
      "<nvlink target=\"0000:bd:00.0\" count=\"4\" tclass=\"0x030000\"/></gpu></pci></cpu>"
      "<cpu numaid=\"0\"><nic><net name=\"mlx5_0+mlx5_1\" dev=\"2\" speed=\"200000\" port=\"1\"/></nic></cpu></system>";
  const NcclSystem s = parseNcclSystem(x, "one-rank");
  const NcclNodeSummary sum = summarize(s);
  EXPECT_FALSE(sum.nvswitch);  // not an NVSwitch: a GPU outside the dump
  EXPECT_EQ(sum.nvlinksOutside, 4);
  ASSERT_EQ(sum.gpusOfNic.size(), 1u);
  EXPECT_EQ(sum.gpusOfNic[0], std::vector<int>{0});
  // Two such nodes: one rank each, joined through their NICs (25 GB/s).
  const Topology topo(ncclTopology({s, s}));
  ASSERT_EQ(topo.nranks(), 2);
  EXPECT_NEAR(topo.route(0, 1).bottleneck, 25.0 * specs::kNicEfficiency, 1e-9);
}

TEST(NcclTopology, BadElementsAndValuesAreOneLineNamingThem) {
  struct Case {
    std::string xml, expect;
  };
  const Case cases[] = {
      {"<system version=\"1\"><cpu><gpuu/></cpu></system>", "<gpuu>"},
      {"<system version=\"1\"><cpu><pci busid=\"0000:01:00.0\"><gpu dev=\"0\" sm=\"abc\"/></pci></cpu></system>", "attribute 'sm'"},
      {"<system version=\"1\"><cpu><pci busid=\"0000:01:00.0\"><gpu sm=\"90\"/></pci></cpu></system>", "attribute 'dev' is missing"},
      {"<system version=\"1\"><cpu><pci busid=\"0000:01:00.0\" link_speed=\"7 GT/s\"><gpu dev=\"0\" sm=\"90\"/></pci></cpu></system>",
       "attribute 'link_speed'"},
      {"<system version=\"1\"><cpu><pci busid=\"x\"><gpu dev=\"0\" sm=\"90\"><nvlink target=\"y\" count=\"-2\"/></gpu></pci></cpu></system>",
       "<nvlink> attribute 'count'"},
      {"<system version=\"1\"><cpu><pci busid=\"x\"><nic><net speed=\"fast\"/></nic></pci></cpu></system>", "<net> attribute 'speed'"},
      {"<topology/>", "not <system>"},
      {"<system version=\"1\"><cpu/></system>", "no <gpu>"},
      {"<system version=\"1\"><cpu><pci busid=\"x\"><gpu dev=\"0\" sm=\"89\"><nvlink target=\"y\" count=\"2\"/></gpu></pci></cpu></system>",
       "no NVLink generation"},
      {"<system", "not well-formed"},
      // Issue 32 row 18: each was accepted (the second document ignored, one device of two taken).
      {"<system version=\"1\"><cpu/></system><system version=\"1\"><cpu/></system>", "<system> follows the <system> element"},
      {"<system version=\"1\"><cpu><pci busid=\"0000:01:00.0\"><gpu dev=\"0\" sm=\"90\"/></pci>"
       "<pci busid=\"0000:01:00.0\"><gpu dev=\"1\" sm=\"90\"/></pci></cpu></system>",
       "'0000:01:00.0' appears twice"},
      {"<system version=\"1\"><cpu><pci busid=\"0000:01:00.0\"><gpu dev=\"0\" sm=\"90\"><nvlink target=\"0000:01:00.0\" count=\"2\"/>"
       "</gpu></pci></cpu></system>",
       "an NVLink to itself"},
  };
  for (const auto& c : cases) {
    try {
      const NcclSystem s = parseNcclSystem(c.xml, "bad.xml");
      (void)ncclTopology({s});
      ADD_FAILURE() << "accepted: " << c.xml;
    } catch (const TopologyError& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find(c.expect), std::string::npos) << m;
      EXPECT_NE(m.find("bad.xml"), std::string::npos) << m;
      EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    }
  }
}

TEST(NcclTopology, SeveralNodesNeedNics) {
  const std::string x = "<system version=\"1\"><cpu><pci busid=\"0000:01:00.0\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\">"
                        "<gpu dev=\"0\" sm=\"80\"/></pci></cpu></system>";
  const NcclSystem s = parseNcclSystem(x, "lonely.xml");
  EXPECT_THROW(ncclTopology({s, s}), TopologyError);
}

TEST(NcclTopology, ArgumentsNameXmlFiles) {
  EXPECT_TRUE(isNcclTopologyArg("a.xml"));
  EXPECT_TRUE(isNcclTopologyArg("a.XML")) << "an upper-case extension is a dump too (was read as JSON)";
  // A list with one .xml is a list of dumps: a part that is empty or not .xml is refused, not a crash
  // (issue 32 row 1) nor a silent drop (row 18: the trailing comma).
  for (const std::string bad : {"a.xml,,b.xml", "a.xml,", "a.xml,b.txt", ",a.xml"}) EXPECT_THROW(ncclTopologyFiles(bad), TopologyError) << bad;
  EXPECT_EQ(ncclTopologyFiles("a.xml,B.Xml"), (std::vector<std::string>{"a.xml", "B.Xml"}));
  EXPECT_TRUE(ncclTopologyFiles("nope").empty());
  EXPECT_TRUE(isNcclTopologyArg("a.xml,b.xml"));
  EXPECT_FALSE(isNcclTopologyArg("dgx-h100"));
  EXPECT_FALSE(isNcclTopologyArg("a.json"));
  EXPECT_FALSE(resolveNcclTopology("cluster", 2));
  EXPECT_THROW(resolveNcclTopology(dataPath(kIbm) + "," + dataPath(kIbm), 3), TopologyError);
  const auto two = resolveNcclTopology(dataPath(kIbm) + "," + dataPath(kIbm), 0);
  ASSERT_TRUE(two);
  EXPECT_EQ(two->kind, TopologyKind::Cluster);
  EXPECT_EQ(two->nodes, 2);
}

// Issue 32 row 4: --nodes copies of a dump were built (11 s, 3.1 GB at 2^20 nodes) before the rank limit
// refused them; now the count is checked first, and copies of one node are a cluster built from two.
TEST(NcclTopology, CopiesAreCheckedAgainstTheRankLimitBeforeAnyIsBuilt) {
  try {
    (void)resolveNcclTopology(dataPath(kIbm), 1 << 20);
    ADD_FAILURE() << "2^20 nodes of 8 GPUs accepted";
  } catch (const TopologyError& e) {
    EXPECT_NE(std::string(e.what()).find("1048576 node(s) of 8 GPU(s) are 8388608 ranks, more than the 1048576"), std::string::npos)
        << e.what();
  }
  const auto many = resolveNcclTopology(dataPath(kIbm), 64);
  ASSERT_TRUE(many);
  const std::vector<NcclSystem> copies(64, loadNcclSystem(dataPath(kIbm)));
  const TopologySpec built = ncclTopology(copies);
  EXPECT_EQ(toJson(*many).dump(), toJson(built).dump()) << "the cluster of two, resized, is the cluster of 64 copies";
}

}  // namespace
}  // namespace cclab::sim
