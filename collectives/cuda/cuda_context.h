// What a CUDA communicator owns: the rank -> device map, the devices, and per rank its streams,
// scratch and staging memory, and the events that order its steps against the other ranks.
//
// Each rank has two streams, which may be the same one:
//   lane():   its own stream, where the events ordering (and a graph capture) puts its steps, so
//             that ranks sharing a device run side by side;
//   stream(): where the rank's work is ordered for the caller (copies, synchronize). Without
//             sharing it is the lane. With sharing (graph and ll orderings) all ranks of a device
//             use the lane of the device's first rank: a replayed graph or a persistent kernel is one
//             launch on it, with no per-rank event handshakes to cost host time on every call.
// The API exposes stream() (Communicator::rankStream) so a caller can order its own work with the
// rank's collectives; lanes stay private to the communicator.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <vector>

#include "collectives/cuda/cuda_resources.h"
#include "collectives/cuda/device_map.h"
#include "collectives/cuda/device_set.h"

namespace cclab::cuda {

class RankState {
 public:
  // shared: the stream() of this rank, or nullptr for its own lane.
  RankState(int rank, int device, cudaStream_t shared);

  [[nodiscard]] int rank() const { return rank_; }
  [[nodiscard]] int device() const { return device_; }
  [[nodiscard]] cudaStream_t lane() const { return lane_.get(); }
  [[nodiscard]] cudaStream_t stream() const { return stream_; }

  // Events and channel streams, created ahead of use (never while a graph is being captured):
  // reserve, then get.
  void reserveStepEvents(std::size_t n);
  // Streams (and their done events) for the rank's 2nd, 3rd, ... channel: a rank's first channel runs
  // on its lane, each other one on its own stream, joined back into the lane at the end of a call.
  void reserveChannelStreams(std::size_t n);
  [[nodiscard]] cudaStream_t channelStream(std::size_t i) const { return channelStreams_.at(i).get(); }
  [[nodiscard]] cudaEvent_t channelDoneEvent(std::size_t i) const { return channelDone_.at(i).get(); }
  [[nodiscard]] cudaEvent_t stepEvent(std::size_t i) const { return stepEvents_.at(i).get(); }
  [[nodiscard]] cudaEvent_t startEvent() const { return start_.get(); }  // the rank's buffers are ready
  [[nodiscard]] cudaEvent_t readyEvent() const { return ready_.get(); }  // the rank's earlier work is done
  [[nodiscard]] cudaEvent_t doneEvent() const { return done_.get(); }    // the rank's collective is done

  // Device memory that only grows; growing waits for the rank's stream first.
  void* scratch(std::size_t bytes);
  void* staging(std::size_t bytes);

 private:
  void* grow(DeviceMemory& mem, std::size_t bytes);

  int rank_;
  int device_;
  Stream lane_;
  cudaStream_t stream_;
  Event start_, ready_, done_;
  std::vector<Event> stepEvents_;
  std::vector<Stream> channelStreams_;
  std::vector<Event> channelDone_;
  DeviceMemory scratch_, staging_;
};

class CudaContext {
 public:
  // Throws Error when no device is visible. shareStreamPerDevice: see the header comment.
  CudaContext(int nranks, bool shareStreamPerDevice);

  [[nodiscard]] int nranks() const { return map_.nranks(); }
  [[nodiscard]] const DeviceMap& map() const { return map_; }
  [[nodiscard]] const DeviceSet& devices() const { return devices_; }
  [[nodiscard]] RankState& rank(int r) { return ranks_.at(static_cast<std::size_t>(r)); }
  [[nodiscard]] const RankState& rank(int r) const { return ranks_.at(static_cast<std::size_t>(r)); }
  [[nodiscard]] int smCount(int device) const { return devices_.info(device).smCount; }

 private:
  DeviceMap map_;
  DeviceSet devices_;
  std::vector<RankState> ranks_;
};

}  // namespace cclab::cuda
