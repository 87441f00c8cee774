#include "trainer/cublas/cublas_library.h"

#include <cstdlib>
#include <mutex>
#include <vector>

#include "collectives/core/dynamic_library.h"

namespace cclab::trainer::cublas {
namespace {

constexpr std::string_view kWhat = "cuBLAS";

bool bind(CublasApi& api, std::string& why) {
  void* lib = openFirstLibrary(libraryCandidates(knobs::Id::CublasLibrary, {"libcublas.so.13", "libcublas.so.12", "libcublas.so"}),
                               kWhat, "CCLAB_CUBLAS_LIBRARY", api.origin, why);
  if (!lib) return false;
  return bindSymbol(lib, "cublasCreate_v2", api.create, kWhat, why) && bindSymbol(lib, "cublasDestroy_v2", api.destroy, kWhat, why) &&
         bindSymbol(lib, "cublasSetStream_v2", api.setStream, kWhat, why) &&
         bindSymbol(lib, "cublasSetMathMode", api.setMathMode, kWhat, why) && bindSymbol(lib, "cublasSgemm_v2", api.sgemm, kWhat, why);
}

}  // namespace

const CublasApi* cublasApi(std::string* why) {
  static std::once_flag once;
  static CublasApi api;
  static bool ok = false;
  static std::string reason;
  std::call_once(once, [] { ok = bind(api, reason); });
  if (!ok && why) *why = reason;
  return ok ? &api : nullptr;
}

}  // namespace cclab::trainer::cublas
