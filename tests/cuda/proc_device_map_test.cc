// Rank -> (process, node, device) of the CUDA backend under mpirun (proc_device_map.h): mapping tables
// for the layouts it is meant for, and the refusals.
#include <gtest/gtest.h>

#include "collectives/core/errors.h"
#include "collectives/gpu_proc/proc_device_map.h"

namespace cclab::cuda {
namespace {

// n nodes of m processes each, every process seeing `devices` devices.
std::vector<ProcessPlacement> uniform(int n, int m, int devices) {
  std::vector<ProcessPlacement> out;
  for (int node = 0; node < n; ++node)
    for (int i = 0; i < m; ++i) out.push_back({node, i, devices});
  return out;
}

TEST(ProcDeviceMap, OneProcessPerGpuOnTwoEightGpuNodes) {
  const ProcDeviceMap m(uniform(2, 8, 8), 1);
  EXPECT_EQ(m.nranks(), 16);
  EXPECT_EQ(m.nodes(), 2);
  const int wantDevice[16] = {0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7};
  for (int r = 0; r < 16; ++r) {
    EXPECT_EQ(m.processOf(r), r) << r;
    EXPECT_EQ(m.nodeOf(r), r / 8) << r;
    EXPECT_EQ(m.deviceOf(r), wantDevice[r]) << r;
  }
  EXPECT_EQ(m.uniformRanksPerNode(), 8);
  EXPECT_EQ(m.ranksOnNode(1), (std::vector<int>{8, 9, 10, 11, 12, 13, 14, 15}));
  EXPECT_TRUE(m.sameNode(3, 7));
  EXPECT_FALSE(m.sameNode(7, 8));
}

TEST(ProcDeviceMap, VirtualRanksPerProcessAreConsecutiveOnItsGpu) {
  const ProcDeviceMap m(uniform(1, 2, 2), 3);  // 2 processes x 3 ranks on a 2-GPU node
  EXPECT_EQ(m.nranks(), 6);
  EXPECT_EQ(m.ranksOf(1), (std::vector<int>{3, 4, 5}));
  for (int r = 0; r < 6; ++r) {
    EXPECT_EQ(m.processOf(r), r / 3) << r;
    EXPECT_EQ(m.deviceOf(r), r / 3) << r;
  }
  EXPECT_TRUE(m.sameProcess(3, 5));
  EXPECT_FALSE(m.sameProcess(2, 3));
  EXPECT_EQ(m.uniformRanksPerNode(), 0) << "one node: no node structure for the plans";
}

TEST(ProcDeviceMap, ProcessesShareTheOnlyGpuOneVirtualRankEach) {
  // What scripts/gpu_check runs: 4 processes on one GPU, or CUDA_VISIBLE_DEVICES narrowed per process.
  const ProcDeviceMap m(uniform(1, 4, 1), 1);
  for (int r = 0; r < 4; ++r) EXPECT_EQ(m.deviceOf(r), 0);
}

TEST(ProcDeviceMap, MoreProcessesThanDevicesGoRoundRobin) {
  const ProcDeviceMap m(uniform(1, 5, 2), 1);
  const int want[5] = {0, 1, 0, 1, 0};
  for (int r = 0; r < 5; ++r) EXPECT_EQ(m.deviceOf(r), want[r]) << r;
}

TEST(ProcDeviceMap, UnevenNodesHaveNoUniformBlock) {
  std::vector<ProcessPlacement> pl = {{0, 0, 1}, {0, 1, 1}, {0, 2, 1}, {1, 0, 1}};
  const ProcDeviceMap m(pl, 2);
  EXPECT_EQ(m.nodes(), 2);
  EXPECT_EQ(m.nodeOfEveryRank(), (std::vector<int>{0, 0, 0, 0, 0, 0, 1, 1}));
  EXPECT_EQ(m.uniformRanksPerNode(), 0);
}

TEST(ProcDeviceMap, Refusals) {
  EXPECT_THROW(ProcDeviceMap({}, 1), InvalidArgument);
  EXPECT_THROW(ProcDeviceMap(uniform(1, 2, 1), 0), InvalidArgument);
  EXPECT_THROW(ProcDeviceMap({{0, 0, 0}}, 1), InvalidArgument) << "a process without a device";
  EXPECT_THROW(ProcDeviceMap({{1, 0, 1}}, 1), InvalidArgument) << "nodes not numbered from 0";
  EXPECT_THROW(ProcDeviceMap({{0, 0, 1}, {0, 0, 1}}, 1), InvalidArgument) << "a local index twice";
  EXPECT_THROW(ProcDeviceMap({{0, 0, 1}, {0, 2, 1}}, 1), InvalidArgument) << "a gap in local indices";
  const ProcDeviceMap m(uniform(1, 2, 1), 2);
  EXPECT_THROW((void)m.processOf(4), InvalidArgument);
  EXPECT_THROW((void)m.deviceOf(-1), InvalidArgument);
  EXPECT_THROW((void)m.ranksOf(2), InvalidArgument);
}

}  // namespace
}  // namespace cclab::cuda
