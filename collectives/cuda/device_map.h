// Rank -> device mapping: K ranks over D visible devices, round-robin.
//
// Rank r runs on device r % D and is that device's (r / D)-th virtual rank. One GPU thus runs K
// virtual ranks (each with its own stream and buffers) and 8 GPUs run 8 real ranks with the same
// code. Pure host logic (no CUDA calls), unit-tested on the CPU.
#pragma once

#include <vector>

namespace cclab::cuda {

class DeviceMap {
 public:
  // Throws InvalidArgument unless nranks >= 1 and ndevices >= 1.
  DeviceMap(int nranks, int ndevices);

  [[nodiscard]] int nranks() const { return nranks_; }
  // Devices that hold at least one rank: min(nranks, ndevices), numbered 0..devicesUsed()-1.
  [[nodiscard]] int devicesUsed() const { return devicesUsed_; }
  [[nodiscard]] int device(int rank) const;
  [[nodiscard]] int localIndex(int rank) const;  // position among the ranks of its device
  [[nodiscard]] int ranksOn(int device) const;   // how many ranks share `device`
  [[nodiscard]] std::vector<int> ranksOf(int device) const;  // those ranks, ascending
  [[nodiscard]] int maxRanksPerDevice() const;
  [[nodiscard]] bool sameDevice(int a, int b) const { return device(a) == device(b); }

 private:
  void checkRank(int rank) const;
  int nranks_;
  int devicesUsed_;
};

}  // namespace cclab::cuda
