#include "bench/harness/reference_check.h"

#include <algorithm>

namespace cclab::bench {
namespace {
// What a buffer holds before a check run, so that an element the collective never wrote is wrong
// (0xCD: as the host tests; a NaN pattern for float16/bfloat16/float32/float64).
constexpr std::byte kPoisonByte{0xCD};
}  // namespace

HostStaging::HostStaging(std::size_t bytes) : data(bytes), expected(bytes), poison(bytes, kPoisonByte) {}

ReferenceCheck::ReferenceCheck(const CollectiveArgs& args, const CollectiveShape& shape, int nranks, std::uint64_t seed)
    : args_(args), shape_(shape), spec_{args.type, args.op, nranks, seed}, elemSize_(sizeOf(args.type)) {}

void ReferenceCheck::writeInputs(Communicator& comm, const RankAllocations& mem, bool inPlace, HostStaging& staging) const {
  const auto inBytes = static_cast<std::size_t>(shape_.inputCount) * elemSize_;
  const auto outBytes = static_cast<std::size_t>(shape_.outputCount) * elemSize_;
  for (int r : comm.localRanks()) {
    const RankBuffers b = mem.buffersFor(r, args_.collective, shape_, elemSize_, inPlace);
    const std::size_t region = inPlace ? std::max(inBytes, outBytes) : outBytes;
    if (region) comm.copyToRank(r, mem.recvBase(r), staging.poison.data(), region);
    fillInput(spec_, r, 0, static_cast<std::size_t>(shape_.inputCount), staging.data.data());
    if (inBytes) comm.copyToRank(r, const_cast<void*>(b.send), staging.data.data(), inBytes);
  }
}

void ReferenceCheck::fillExpected(int rank, std::byte* dst) const {
  const auto n = static_cast<std::size_t>(shape_.count);
  switch (args_.collective) {
    case plan::Collective::AllReduce:
    case plan::Collective::Reduce: fillExpectedReduce(spec_, 0, n, dst); break;
    case plan::Collective::ReduceScatter: fillExpectedReduce(spec_, rank * shape_.count, n, dst); break;
    case plan::Collective::AllGather:
      for (int q = 0; q < spec_.nranks; ++q) fillInput(spec_, q, 0, n, dst + static_cast<std::size_t>(q) * n * elemSize_);
      break;
    case plan::Collective::Broadcast: fillInput(spec_, args_.root, 0, n, dst); break;
  }
}

std::int64_t ReferenceCheck::countWrongOutputs(Communicator& comm, const RankAllocations& mem, bool inPlace,
                                               HostStaging& staging) const {
  const auto outCount = static_cast<std::size_t>(shape_.outputCount);
  // Only reduce-scatter's reference differs between ranks; the others are computed once.
  const bool perRank = args_.collective == plan::Collective::ReduceScatter;
  std::int64_t wrong = 0;
  bool haveExpected = false;
  for (int r : comm.localRanks()) {
    if (args_.collective == plan::Collective::Reduce && r != args_.root) continue;
    if (perRank || !haveExpected) {
      fillExpected(r, staging.expected.data());
      haveExpected = true;
    }
    const RankBuffers b = mem.buffersFor(r, args_.collective, shape_, elemSize_, inPlace);
    if (outCount) comm.copyFromRank(r, staging.data.data(), b.recv, outCount * elemSize_);
    wrong += static_cast<std::int64_t>(countWrong(args_.type, staging.data.data(), staging.expected.data(), outCount));
  }
  return comm.sumOverProcesses(wrong);  // every process checks its own ranks
}

}  // namespace cclab::bench
