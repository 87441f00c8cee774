// The shared limits' refusal (limits.h).
#include "collectives/conventions/limits.h"

#include <fmt/format.h>

#include "collectives/core/errors.h"

namespace cclab::conventions {

void requireAtMost(std::int64_t value, std::int64_t limit, std::string_view what, std::string_view why) {
  if (value <= limit) return;
  throw InvalidArgument(fmt::format("{} is {}, more than the limit of {} ({})", what, value, limit, why));
}

}  // namespace cclab::conventions
