// The Communicator's defaults: every rank local, auto's resolution, the convenience wrappers.
#include "collectives/call/communicator_base.h"

#include "collectives/call/auto_rule.h"

namespace cclab {

std::vector<int> Communicator::localRanks() const {
  std::vector<int> all(static_cast<std::size_t>(nranks()));
  for (int r = 0; r < nranks(); ++r) all[static_cast<std::size_t>(r)] = r;
  return all;
}

plan::Algorithm Communicator::resolve(const CollectiveArgs& args, plan::Algorithm requested) const {
  // The algorithm really run: Broadcast/Reduce run dbtree as the tree and ring as the chain.
  return plan::generatedAlgorithm(
      args.collective, requested == plan::Algorithm::Auto ? autoAlgorithm(args, nranks(), backend()) : requested);
}

void Communicator::allReduce(int rank, const void* send, void* recv, std::int64_t count, DataType t, ReduceOp op,
                             const CollectiveOptions& o) {
  run(rank, {plan::Collective::AllReduce, count, t, op, 0}, {send, recv}, o);
}
void Communicator::reduceScatter(int rank, const void* send, void* recv, std::int64_t recvCount, DataType t, ReduceOp op,
                                 const CollectiveOptions& o) {
  run(rank, {plan::Collective::ReduceScatter, recvCount, t, op, 0}, {send, recv}, o);
}
void Communicator::allGather(int rank, const void* send, void* recv, std::int64_t sendCount, DataType t,
                             const CollectiveOptions& o) {
  run(rank, {plan::Collective::AllGather, sendCount, t, ReduceOp::Sum, 0}, {send, recv}, o);
}
void Communicator::broadcast(int rank, const void* send, void* recv, std::int64_t count, DataType t, int root,
                             const CollectiveOptions& o) {
  run(rank, {plan::Collective::Broadcast, count, t, ReduceOp::Sum, root}, {send, recv}, o);
}
void Communicator::reduce(int rank, const void* send, void* recv, std::int64_t count, DataType t, ReduceOp op, int root,
                          const CollectiveOptions& o) {
  run(rank, {plan::Collective::Reduce, count, t, op, root}, {send, recv}, o);
}

}  // namespace cclab
