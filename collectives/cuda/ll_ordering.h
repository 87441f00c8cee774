// The low-latency ordering: one persistent cooperative kernel per device runs every step of that
// device's ranks, ordered by progress words in device memory (ll_kernel.h) instead of events, so a
// small collective costs one launch per device instead of one per step. The kernel runs on the
// stream the device's ranks share (cuda_context.h), so a call needs no event handshakes either. The
// step tables are built
// from the lowered plan once per plan (cached, in device memory); the buffers travel by value in the
// kernel parameters. Needs peer access between all devices (a kernel reads peers' buffers and
// progress words directly) and at most kMaxLlRanks ranks. A spin that outlives the call's timeout
// ends the kernel; synchronize() then throws TimeoutError naming the ranks, and the words are reset.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "collectives/cuda/ll_kernel.h"
#include "collectives/cuda/ordering.h"

namespace cclab::cuda {

class LowLatencyOrdering final : public Ordering {
 public:
  static constexpr std::size_t kMaxTables = 256;

  explicit LowLatencyOrdering(CudaContext& context);
  [[nodiscard]] std::string name() const override { return "ll"; }
  void run(const PreparedCall& call) override;
  void checkErrors() override;

 private:
  struct DeviceTables {  // one device's share of a lowered plan
    DeviceMemory steps, waits;
    std::vector<LlRankSlot> slots;
    std::int64_t maxStepElems = 0;
  };
  struct DeviceState {
    int device = 0;
    std::vector<int> ranks;  // global ranks on this device, by local index
    DeviceMemory flags;      // progress (u64 per local rank), arrive (u32 per local rank), abort (u32)
    cudaStream_t stream = nullptr;  // shared by the device's ranks
    [[nodiscard]] unsigned long long* progress(int local) const;
    [[nodiscard]] unsigned int* arrive() const;
    [[nodiscard]] unsigned int* abortFlag() const;
  };

  const std::vector<DeviceTables>& tablesFor(const PreparedCall& call);
  void resetAfterError();

  CudaContext& context_;
  std::vector<DeviceState> devices_;
  MappedHostMemory reports_;  // one LlErrorReport per device
  std::map<std::string, std::vector<DeviceTables>> tables_;
  std::map<std::pair<int, int>, int> maxResident_;  // (type, op) -> blocks per device
  unsigned long long seq_ = 0;
};

}  // namespace cclab::cuda
