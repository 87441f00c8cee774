// NCCL's entry points. When the build found libnccl_static.a (CCLAB_NCCL_STATIC) they are bound to
// the linked library; otherwise libnccl.so.2 is loaded at run time (dlopen), so binaries that never
// use NCCL run where it is absent, and a GPU machine's own copy (e.g. the one PyTorch ships) can be
// used: CCLAB_NCCL_LIBRARY=/path/to/libnccl.so.2, else the loader's search path.
#pragma once

#include <nccl.h>

#include <string>

namespace cclab::nccl {

struct NcclApi {
  decltype(&::ncclGetVersion) getVersion = nullptr;
  decltype(&::ncclGetErrorString) getErrorString = nullptr;
  decltype(&::ncclCommInitAll) commInitAll = nullptr;
  decltype(&::ncclCommDestroy) commDestroy = nullptr;
  decltype(&::ncclCommAbort) commAbort = nullptr;
  decltype(&::ncclCommGetAsyncError) commGetAsyncError = nullptr;
  decltype(&::ncclGroupStart) groupStart = nullptr;
  decltype(&::ncclGroupEnd) groupEnd = nullptr;
  decltype(&::ncclAllReduce) allReduce = nullptr;
  decltype(&::ncclReduceScatter) reduceScatter = nullptr;
  decltype(&::ncclAllGather) allGather = nullptr;
  decltype(&::ncclBroadcast) broadcast = nullptr;
  decltype(&::ncclReduce) reduce = nullptr;
  std::string origin;  // where it came from: "static" or the library path
};

// The loaded API, or nullptr with the reason in *why. Loads once; thread-safe.
const NcclApi* ncclApi(std::string* why = nullptr);

// "2.28.9" from ncclGetVersion's code.
std::string versionString(int code);

}  // namespace cclab::nccl

// Throws cclab::NcclError naming the call, NCCL's message, file and line.
#define CCLAB_NCCL_CHECK(api, expr)                                                               \
  do {                                                                                            \
    const ncclResult_t cclabNcclStatus_ = (expr);                                                 \
    if (cclabNcclStatus_ != ncclSuccess)                                                          \
      throw ::cclab::NcclError(std::string(#expr) + " failed: " + (api).getErrorString(cclabNcclStatus_) + \
                               " at " + __FILE__ + ":" + std::to_string(__LINE__));               \
  } while (false)
