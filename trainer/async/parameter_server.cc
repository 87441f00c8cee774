#include "trainer/async/parameter_server.h"

#include <cmath>

#include <algorithm>
#include <chrono>

#include "collectives/core/errors.h"

namespace cclab::trainer {
namespace {

std::int64_t sinceNs(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

ParameterServer::ParameterServer(std::vector<float> initial, SgdConfig sgd, float dcLambda, float gradScale,
                                 bool dcAdaptive)
    : params_(std::move(initial)), sgd_(sgd, static_cast<std::int64_t>(params_.size())), dcLambda_(dcLambda),
      gradScale_(gradScale),
      compensated_(dcLambda > 0.0F ? params_.size() : 0), dcAdaptive_(dcAdaptive && dcLambda > 0.0F),
      meanSquare_(dcAdaptive_ ? params_.size() : 0) {}

void ParameterServer::forceStaleness(int k) {
  if (k < 0) throw InvalidArgument("forced staleness must be >= 0");
  std::lock_guard lock(mutex_);
  forcedStaleness_ = k;
  history_.clear();
  if (k > 0) history_.emplace_back(version_, params_);
}

PullResult ParameterServer::pull(std::span<float> out) {
  if (out.size() != params_.size()) throw InvalidArgument("ParameterServer::pull: wrong parameter count");
  const auto t = std::chrono::steady_clock::now();
  std::lock_guard lock(mutex_);
  const std::int64_t waited = sinceNs(t);
  if (forcedStaleness_ > 0) {  // the oldest kept version: version_ - K once K updates were applied
    std::copy(history_.front().second.begin(), history_.front().second.end(), out.begin());
    return {history_.front().first, waited};
  }
  std::copy(params_.begin(), params_.end(), out.begin());
  return {version_, waited};
}

PushResult ParameterServer::push(std::span<const float> grads, std::span<const float> pulled, std::int64_t pulledVersion) {
  if (grads.size() != params_.size() || pulled.size() != params_.size())
    throw InvalidArgument("ParameterServer::push: wrong parameter count");
  const auto t = std::chrono::steady_clock::now();
  std::lock_guard lock(mutex_);
  const std::int64_t waited = sinceNs(t);
  const std::int64_t staleness = version_ - pulledVersion;
  if (dcAdaptive_)
    for (std::size_t i = 0; i < params_.size(); ++i)
      meanSquare_[i] = kDcMeanSquareMomentum * meanSquare_[i] + (1.0F - kDcMeanSquareMomentum) * grads[i] * grads[i];
  if (dcLambda_ > 0.0F && staleness > 0) {
    for (std::size_t i = 0; i < params_.size(); ++i) {
      const float lambda = dcAdaptive_ ? dcLambda_ / std::sqrt(meanSquare_[i] + kDcEpsilon) : dcLambda_;
      compensated_[i] = grads[i] + lambda * grads[i] * grads[i] * (params_[i] - pulled[i]);
    }
    sgd_.step(params_, compensated_, gradScale_);
  } else {
    sgd_.step(params_, grads, gradScale_);
  }
  ++version_;
  if (forcedStaleness_ > 0) {
    if (static_cast<int>(history_.size()) > forcedStaleness_) {  // reuse the oldest buffer
      auto oldest = std::move(history_.front());
      history_.pop_front();
      oldest.first = version_;
      std::copy(params_.begin(), params_.end(), oldest.second.begin());
      history_.push_back(std::move(oldest));
    } else {
      history_.emplace_back(version_, params_);
    }
  }
  return {staleness, waited};
}

std::vector<float> ParameterServer::snapshot() const {
  std::lock_guard lock(mutex_);
  return params_;
}

std::int64_t ParameterServer::version() const {
  std::lock_guard lock(mutex_);
  return version_;
}

}  // namespace cclab::trainer
