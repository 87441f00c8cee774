// The device runner of the cuBLAS path: a StepProgram's GEMMs through cublasSgemm and its elementwise
// ops as kernels (cublas_kernels.cu), all on the rank's stream of the CUDA Communicator
// (Communicator::rankStream), so the buckets' allreduces are ordered after the backward that produced
// them without a host wait. Regions are device memory from Communicator::allocate. cuBLAS is loaded
// at run time (cublas_library.h), as NCCL is: nothing links libcublas.
// Built only with CUDA; without it (or without a device, or cuBLAS) makeCublasRunner throws.
#pragma once

#include <memory>
#include <string>

#include "collectives/communicator.h"
#include "trainer/cublas/op_runner.h"

namespace cclab::trainer::cublas {

// True when this build has the cuBLAS path and cuBLAS loads; otherwise false with the reason.
bool cublasAvailable(std::string* why = nullptr);

// comm must be the cuda backend (its rankStream). Throws Error when unavailable.
std::unique_ptr<OpRunner> makeCublasRunner(Communicator& comm, int rank, const RegionSizes& sizes);

}  // namespace cclab::trainer::cublas
