// Whether a vector of parameters or gradients holds only finite numbers: the cheap test behind the
// trainer's stop on divergence (one pass over the bits, no branches, vectorised).
#pragma once

#include <span>

namespace cclab::trainer {

[[nodiscard]] bool allFinite(std::span<const float> values);

}  // namespace cclab::trainer
