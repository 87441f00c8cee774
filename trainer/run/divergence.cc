#include "trainer/run/divergence.h"

#include <cmath>
#include <string>

#include "collectives/core/errors.h"
#include "fmt/format.h"
#include "trainer/model/finite.h"

namespace cclab::trainer {
namespace {

[[noreturn]] void diverged(const std::string& where, const std::string& what, const TrainConfig& c) {
  throw Error(fmt::format("training diverged {}: {} (--lr {:g}, --momentum {:g}); try a smaller --lr", where, what,
                          c.sgd.lr, c.sgd.momentum));
}

std::string at(int epoch, std::int64_t step) { return fmt::format("in epoch {}, step {}", epoch + 1, step + 1); }

}  // namespace

void checkParamsFinite(std::span<const float> params, const TrainConfig& c, int epoch, std::int64_t step) {
  if (!allFinite(params)) diverged(at(epoch, step), "the parameters are no longer finite", c);
}

void checkLossFinite(double lossSum, const TrainConfig& c, int epoch, std::int64_t step, int rank) {
  if (!std::isfinite(lossSum)) diverged(at(epoch, step), fmt::format("worker {}'s loss is {}", rank, lossSum), c);
}

void checkReplicasAgree(double divergence) {
  if (divergence == 0.0) return;
  throw Error(fmt::format("the replicas drifted apart: max |w_r - w_0| = {:g} at the end (sync replicas must end "
                          "identical; ranks trained with different data or configuration)",
                          divergence));
}

void checkEpochFinite(const EpochRecord& e, const TrainConfig& c) {
  if (!std::isfinite(e.trainLoss) || !std::isfinite(e.testLoss))
    diverged(fmt::format("in epoch {}", e.epoch + 1), fmt::format("train loss {}, test loss {}", e.trainLoss, e.testLoss), c);
}

}  // namespace cclab::trainer
