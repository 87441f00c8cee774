// Asynchronous data parallelism's shared state, parameter-server style: one parameter copy that
// workers pull from and push gradients to without waiting for each other. Every push applies one SGD
// step and bumps the version; the staleness of a push is the number of updates applied between its
// pull and its push. With DC-ASGD (Zheng et al., 2017) the stale gradient is compensated first:
//   g' = g + lambda * g (.) g (.) (w_now - w_pulled)
// and with its adaptive form DC-ASGD-a (same paper) lambda is divided, element by element, by the root
// of a moving mean square of the gradients pushed so far:
//   ms = m * ms + (1 - m) * g (.) g  (every push, m = kDcMeanSquareMomentum);  lambda_i = lambda / sqrt(ms_i + eps)
// The copy is guarded by one mutex: a pull or push is a ~1 MB copy or update, short next to a step.
#pragma once

#include <cstdint>
#include <deque>
#include <utility>
#include <mutex>
#include <span>
#include <vector>

#include "trainer/model/sgd.h"

namespace cclab::trainer {

struct PullResult {
  std::int64_t version = 0;
  std::int64_t lockWaitNs = 0;
};

struct PushResult {
  std::int64_t staleness = 0;
  std::int64_t lockWaitNs = 0;
};

class ParameterServer {
 public:
  // Each push applies lr x gradScale x g (gradScale = 1/workers: N pushes of batch/N samples move
  // the weights about as far as one synchronous step of the whole batch).
  ParameterServer(std::vector<float> initial, SgdConfig sgd, float dcLambda, float gradScale = 1.0F,
                  bool dcAdaptive = false);
  // Forced staleness (--forced-staleness K): every pull returns the parameters as they were K updates
  // ago (the initial ones while fewer than K were applied) with that version, so each gradient is
  // computed K updates stale whatever the scheduling; 0 = off. Keeps the last K versions.
  void forceStaleness(int k);
  static constexpr float kDcMeanSquareMomentum = 0.95F;
  static constexpr float kDcEpsilon = 1e-7F;

  PullResult pull(std::span<float> out);
  // grads: the worker's mean gradient; pulled: the parameters it was computed at (for DC-ASGD).
  PushResult push(std::span<const float> grads, std::span<const float> pulled, std::int64_t pulledVersion);

  [[nodiscard]] std::vector<float> snapshot() const;
  [[nodiscard]] std::int64_t version() const;

 private:
  mutable std::mutex mutex_;
  std::vector<float> params_;
  Sgd sgd_;
  float dcLambda_;
  float gradScale_;
  std::vector<float> compensated_;
  bool dcAdaptive_;
  std::vector<float> meanSquare_;  // DC-ASGD-a: moving mean of g (.) g
  int forcedStaleness_ = 0;
  std::deque<std::pair<std::int64_t, std::vector<float>>> history_;  // (version, parameters), oldest first
  std::int64_t version_ = 0;
};

}  // namespace cclab::trainer
