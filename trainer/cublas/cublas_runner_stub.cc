// The cuBLAS path in a build without CUDA: it is unavailable, with the reason.
#include "collectives/core/errors.h"
#include "trainer/cublas/cublas_runner.h"

namespace cclab::trainer::cublas {

namespace {
constexpr const char* kWhy = "this build has no CUDA (nvcc was not found at configure time)";
}

bool cublasAvailable(std::string* why) {
  if (why) *why = kWhy;
  return false;
}

std::unique_ptr<OpRunner> makeCublasRunner(Communicator&, int, const RegionSizes&) {
  throw Error(std::string("cuBLAS path unavailable: ") + kWhy);
}

}  // namespace cclab::trainer::cublas
