#include "trainer/sync/gradient_exchange.h"

namespace cclab::trainer {

GradientExchange::GradientExchange(Communicator& comm, CollectiveOptions options, std::int64_t parameters)
    // proc: plain host memory; the backend copies it through its shared segment itself.
    : comm_(comm), options_(options), staged_(comm.backend() != Backend::Host && comm.backend() != Backend::Proc) {
  if (!staged_) return;
  for (int r = 0; r < comm.nranks(); ++r)
    device_.push_back(comm.allocate(r, static_cast<std::size_t>(parameters) * sizeof(float)));
}

float* GradientExchange::staged(int rank, std::span<float> data, std::int64_t offset) {
  if (!staged_) return data.data();
  float* dev = static_cast<float*>(device_[static_cast<std::size_t>(rank)].data()) + offset;
  comm_.copyToRank(rank, dev, data.data(), data.size_bytes());
  return dev;
}

void GradientExchange::unstage(int rank, std::span<float> data, const float* device) {
  if (!staged_) return;
  comm_.synchronizeRank(rank);  // this rank's stream, not every rank's
  comm_.copyFromRank(rank, data.data(), device, data.size_bytes());
}

void GradientExchange::allReduceSum(int rank, std::span<float> data, std::int64_t offset) {
  float* buf = staged(rank, data, offset);
  comm_.allReduce(rank, buf, buf, static_cast<std::int64_t>(data.size()), DataType::Float32, ReduceOp::Sum, options_);
  unstage(rank, data, buf);
}

void GradientExchange::broadcast(int rank, std::span<float> data, int root) {
  float* buf = staged(rank, data, 0);
  CollectiveOptions options = options_;
  options.algorithm = plan::Algorithm::Auto;  // the allreduce's algorithm may have no broadcast form
  comm_.broadcast(rank, buf, buf, static_cast<std::int64_t>(data.size()), DataType::Float32, root, options);
  unstage(rank, data, buf);
}

}  // namespace cclab::trainer
