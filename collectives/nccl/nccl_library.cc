#include "collectives/nccl/nccl_library.h"

#include <cstdlib>
#include <mutex>
#include <vector>

#include "collectives/core/dynamic_library.h"

namespace cclab::nccl {
namespace {

#if CCLAB_NCCL_STATIC
bool bind(NcclApi& api, std::string& why) {
  api.getVersion = &::ncclGetVersion;
  api.getErrorString = &::ncclGetErrorString;
  api.commInitAll = &::ncclCommInitAll;
  api.commDestroy = &::ncclCommDestroy;
  api.commAbort = &::ncclCommAbort;
  api.commGetAsyncError = &::ncclCommGetAsyncError;
  api.groupStart = &::ncclGroupStart;
  api.groupEnd = &::ncclGroupEnd;
  api.allReduce = &::ncclAllReduce;
  api.reduceScatter = &::ncclReduceScatter;
  api.allGather = &::ncclAllGather;
  api.broadcast = &::ncclBroadcast;
  api.reduce = &::ncclReduce;
  api.origin = "static";
  why.clear();
  return true;
}
#else
constexpr std::string_view kWhat = "NCCL";

template <class F>
bool sym(void* lib, const char* name, F& out, std::string& why) {
  return bindSymbol(lib, name, out, kWhat, why);
}

bool bind(NcclApi& api, std::string& why) {
  void* lib = openFirstLibrary(libraryCandidates(knobs::Id::NcclLibrary, {"libnccl.so.2", "libnccl.so"}), kWhat,
                               "CCLAB_NCCL_LIBRARY", api.origin, why);
  if (!lib) return false;
  return sym(lib, "ncclGetVersion", api.getVersion, why) && sym(lib, "ncclGetErrorString", api.getErrorString, why) &&
         sym(lib, "ncclCommInitAll", api.commInitAll, why) && sym(lib, "ncclCommDestroy", api.commDestroy, why) &&
         sym(lib, "ncclCommAbort", api.commAbort, why) && sym(lib, "ncclCommGetAsyncError", api.commGetAsyncError, why) &&
         sym(lib, "ncclGroupStart", api.groupStart, why) && sym(lib, "ncclGroupEnd", api.groupEnd, why) &&
         sym(lib, "ncclAllReduce", api.allReduce, why) && sym(lib, "ncclReduceScatter", api.reduceScatter, why) &&
         sym(lib, "ncclAllGather", api.allGather, why) && sym(lib, "ncclBroadcast", api.broadcast, why) &&
         sym(lib, "ncclReduce", api.reduce, why);
  // The library stays loaded for the life of the process (NCCL keeps threads of its own).
}
#endif

}  // namespace

const NcclApi* ncclApi(std::string* why) {
  static std::once_flag once;
  static NcclApi api;
  static bool ok = false;
  static std::string reason;
  std::call_once(once, [] { ok = bind(api, reason); });
  if (!ok && why) *why = reason;
  return ok ? &api : nullptr;
}

std::string versionString(int code) {
  // NCCL >= 2.9: code = major * 10000 + minor * 100 + patch.
  return std::to_string(code / 10000) + "." + std::to_string(code / 100 % 100) + "." + std::to_string(code % 100);
}

}  // namespace cclab::nccl
