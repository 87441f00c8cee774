#include "trainer/cublas/cublas_library.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <vector>

namespace cclab::trainer::cublas {
namespace {

template <class F>
bool bindSymbol(void* lib, const char* name, F& out, std::string& why) {
  out = reinterpret_cast<F>(dlsym(lib, name));
  if (!out) why = std::string("symbol ") + name + " missing from cuBLAS";
  return out != nullptr;
}

bool bind(CublasApi& api, std::string& why) {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("CCLAB_CUBLAS_LIBRARY"); env && *env) candidates.emplace_back(env);
  for (const char* name : {"libcublas.so.13", "libcublas.so.12", "libcublas.so"}) candidates.emplace_back(name);
  void* lib = nullptr;
  std::string tried;
  for (const std::string& c : candidates) {
    lib = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib) {
      api.origin = c;
      break;
    }
    const char* err = dlerror();
    tried += (tried.empty() ? "" : "; ") + (err ? std::string(err) : c);
  }
  if (!lib) {
    why = "cannot load cuBLAS (" + tried + "); set CCLAB_CUBLAS_LIBRARY or LD_LIBRARY_PATH";
    return false;
  }
  // Stays loaded for the life of the process.
  return bindSymbol(lib, "cublasCreate_v2", api.create, why) && bindSymbol(lib, "cublasDestroy_v2", api.destroy, why) &&
         bindSymbol(lib, "cublasSetStream_v2", api.setStream, why) &&
         bindSymbol(lib, "cublasSetMathMode", api.setMathMode, why) && bindSymbol(lib, "cublasSgemm_v2", api.sgemm, why);
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
