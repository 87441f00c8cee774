// Runaways refused up front: the limits every tool checks before it starts work that grows with its
// input (a rank count, a model width, a data file's claimed size, trace events), each refused with
// one line that names the value and the limit, instead of minutes of work or an out-of-memory kill.
// Memory itself is memory_budget.h's (MemAvailable); these bound work and inputs that memory alone
// does not (a slow calibration, an untrusted header).
#pragma once

#include <cstdint>
#include <string_view>

namespace cclab::conventions {

// A data file's payload as its header claims it (trainer IDX files): Fashion-MNIST's training images are
// 47 MB; a header claiming more than this is refused before anything is inflated.
inline constexpr std::int64_t kMaxDataFileBytes = std::int64_t{4} << 30;
// Events of one trace file (trainer --trace): a few hundred bytes each in memory and in the JSON, and
// a Chrome trace viewer does not open files of more than a few million events anyway.
inline constexpr std::int64_t kMaxTraceEvents = 5'000'000;
// Parameters of one model replica (trainer --layers/--widths): 1 GiB of float32; every worker holds its
// replica, its gradients and its momentum.
inline constexpr std::int64_t kMaxModelParameters = std::int64_t{1} << 28;

// Throws InvalidArgument "<what> is <value>, more than the limit of <limit> (<why>)" when value > limit.
void requireAtMost(std::int64_t value, std::int64_t limit, std::string_view what, std::string_view why);

}  // namespace cclab::conventions
