// The CUDA device of one process of the multi-process CUDA backend (proc_device.h): device memory
// exported and imported with CUDA IPC (cudaIpcGetMemHandle / cudaIpcOpenMemHandle with lazy peer
// access; a process may import a peer's memory on the same GPU or on another GPU of the node), pinned
// host memory mapped into the device's address space (cudaHostAlloc portable|mapped: kernels read the
// staged slices from it directly), and the backend's reduce-copy kernels on one stream per process,
// each call drained with a bounded poll. Compiled for sm_90.
#pragma once

#include <memory>

#include "collectives/gpu_proc/proc_device.h"

namespace cclab::cuda {

// Throws CudaError when the device cannot be used.
std::unique_ptr<ProcDevice> makeCudaProcDevice(int ordinal);

}  // namespace cclab::cuda
