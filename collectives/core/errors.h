// The error hierarchy every room throws (docs/design.md, "Errors and exit codes"): cclab::Error and its kinds.
// Messages name the call, and where it comes from a macro, the file and line.
#pragma once

#include <stdexcept>
#include <string>

namespace cclab {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A bad argument from the caller: a size that does not fit, an unknown name, a rank out of range.
class InvalidArgument : public Error {
 public:
  using Error::Error;
};

// A bounded wait ran out; the message names the ranks waited for.
class TimeoutError : public Error {
 public:
  using Error::Error;
};

class CudaError : public Error {
 public:
  using Error::Error;
};

class NcclError : public Error {
 public:
  using Error::Error;
};

}  // namespace cclab
