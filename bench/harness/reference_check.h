// Exact test data for one measurement (collectives/core/test_data.h): writes every rank's input,
// poisons what the collective must overwrite, and counts the output elements whose bits differ from
// the reference (#wrong). Host staging memory is owned by the caller and reused across sizes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "bench/harness/rank_allocations.h"
#include "collectives/core/test_data.h"

namespace cclab::bench {

// Host buffers, each as large as one rank's largest buffer; allocated once per run.
struct HostStaging {
  std::vector<std::byte> data;      // inputs on their way in, outputs on their way out
  std::vector<std::byte> expected;  // the reference output of one rank
  std::vector<std::byte> poison;    // kPoisonByte everywhere

  explicit HostStaging(std::size_t bytes);
};

class ReferenceCheck {
 public:
  ReferenceCheck(const CollectiveArgs& args, const CollectiveShape& shape, int nranks, std::uint64_t seed);

  // Fills every rank's input for `inPlace`'s layout, and poisons the rest of its output buffer.
  void writeInputs(Communicator& comm, const RankAllocations& mem, bool inPlace, HostStaging& staging) const;
  // Wrong elements over every rank that has an output (reduce: the root only).
  [[nodiscard]] std::int64_t countWrongOutputs(Communicator& comm, const RankAllocations& mem, bool inPlace,
                                               HostStaging& staging) const;

 private:
  void fillExpected(int rank, std::byte* dst) const;

  CollectiveArgs args_;
  CollectiveShape shape_;
  DataSpec spec_;
  std::size_t elemSize_;
};

}  // namespace cclab::bench
