// UsageError: a bad command line (unknown flag, a value that does not parse, sizes that do not fit).
// Tools print its message as one line on stderr and exit with kExitUsage.
#pragma once

#include <stdexcept>

namespace cclab::bench {

// Exit statuses shared by every *_perf tool and peer (docs/design.md, "Errors and exit codes": 2 for bad usage).
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  // a runtime error, or #wrong > 0
inline constexpr int kExitUsage = 2;

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace cclab::bench
