// Progress callbacks a run makes (the CLI prints them on stderr).
#pragma once

#include <functional>

#include "trainer/metrics/records.h"

namespace cclab::trainer {

using EpochObserver = std::function<void(const EpochRecord&)>;

}  // namespace cclab::trainer
