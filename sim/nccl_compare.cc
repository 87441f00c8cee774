// `--algo nccl` (nccl_compare.h).
#include "sim/nccl_compare.h"

#include "sim/analytic.h"

namespace cclab::sim {

std::optional<SimAlgorithm> ourAlgorithmFor(NcclAlgorithm a) {
  switch (a) {
    case NcclAlgorithm::Ring: return SimAlgorithm::Ring;
    case NcclAlgorithm::Tree: return SimAlgorithm::Tree;
    case NcclAlgorithm::Nvls: return SimAlgorithm::Nvls;
    // Our nvls across nodes: NVLS in each node, a ring across nodes where NCCL's NVLS tree has a tree.
    case NcclAlgorithm::NvlsTree: return SimAlgorithm::Nvls;
    default: return std::nullopt;
  }
}

std::vector<NcclComparison> compareWithNccl(const Predictor& predict, plan::Collective c, int p, std::int64_t elemSize,
                                            const std::vector<Bytes>& sizes) {
  const NcclGraph g = ncclGraphOf(predict.topo, p);
  std::vector<NcclComparison> out;
  for (Bytes size : sizes) {
    const bool perRank = c == plan::Collective::AllGather || c == plan::Collective::ReduceScatter;
    const std::int64_t count = perRank ? size / elemSize / p : size / elemSize;  // the NCCL API's count
    // NCCL's bytes: the whole vector; for allgather and reduce-scatter nranks x the per-rank count.
    const Bytes ncclBytes = perRank ? count * elemSize * p : count * elemSize;
    NcclComparison row{.size = size, .nccl = ncclPick(g, c, ncclBytes)};
    if (const auto ours = ourAlgorithmFor(row.nccl.algorithm)) {
      Predictor pr = predict;
      if (predict.topo.spec().llProtocol)
        pr.protocol = row.nccl.protocol == Protocol::LL      ? ProtocolChoice::LL
                      : row.nccl.protocol == Protocol::LL128 ? ProtocolChoice::LL128
                                                             : ProtocolChoice::Simple;
      row.ourAlgorithm = ranAlgorithmName(c, *ours);
      row.ours = pr.predict(c, *ours, p, count);
    }
    out.push_back(std::move(row));
  }
  return out;
}

}  // namespace cclab::sim
