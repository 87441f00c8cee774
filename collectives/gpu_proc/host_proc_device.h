// A host stand-in for the CUDA device of the multi-process CUDA backend (gpu_proc/proc_device.h), so its
// executor's protocol — the IPC exchange, progress words, staging between nodes — runs under mpirun
// on a machine without a GPU: the MPI tests use it, and `CCLAB_CUDA_PROC_STANDIN=host` makes
// `--backend cuda` under mpirun use it (scripts/gpu_check --rehearse). "Device memory" is a
// shared-memory segment per allocation and its "IPC handle" the segment's name (importing attaches
// it); "pinned" memory is plain host memory; a reduce-copy is the host's reduce kernel. Nothing run on
// it is a GPU result.
#pragma once

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <utility>

#include "collectives/core/dtype.h"
#include "collectives/core/errors.h"
#include "collectives/gpu_proc/proc_device.h"
#include "collectives/proc/shm_segment.h"

namespace cclab::mpi {

class HostProcDevice final : public cuda::ProcDevice {
 public:
  HostProcDevice(std::string job, int rank) : job_(std::move(job)), rank_(rank) {}

  std::string id() const override { return "host"; }
  std::string describe() const override { return "a host stand-in device"; }
  void* allocate(std::size_t bytes) override {
    std::string purpose = "a";  // (not "a" + to_string: g++ 12 warns falsely, -Wrestrict)
    purpose += std::to_string(next_++);
    proc::ShmSegment seg = proc::ShmSegment::create(proc::segmentName(job_, rank_, purpose), bytes);
    void* p = seg.data();
    owned_.emplace(p, std::move(seg));
    return p;
  }
  void release(void* p) noexcept override { owned_.erase(p); }
  cuda::IpcHandle exportMemory(void* allocation) override {
    const std::string& name = owned_.at(allocation).name();
    if (name.size() >= cuda::kIpcHandleBytes) throw Error("host device: segment name too long for a handle");
    cuda::IpcHandle h{};
    std::memcpy(h.data(), name.data(), name.size());
    return h;
  }
  void* importMemory(const cuda::IpcHandle& handle) override {
    const std::string name(reinterpret_cast<const char*>(handle.data()), strnlen(reinterpret_cast<const char*>(handle.data()), handle.size()));
    proc::ShmSegment seg = proc::ShmSegment::attach(name, std::chrono::seconds(10));
    void* p = seg.data();
    imported_.emplace(p, std::move(seg));
    ++importsOpened_;
    return p;
  }
  void closeImported(void* p) noexcept override { imported_.erase(p); }
  void* allocatePinned(std::size_t bytes) override {
    constexpr std::size_t kAlign = 256;
    return std::aligned_alloc(kAlign, (std::max<std::size_t>(bytes, 1) + kAlign - 1) / kAlign * kAlign);
  }
  void releasePinned(void* p) noexcept override { std::free(p); }
  void reduceCopy(DataType type, ReduceOp op, void* dst, const void* local, const void* src, std::int64_t count) override {
    if (count <= 0) return;
    if (local == nullptr)
      std::memmove(dst, src, static_cast<std::size_t>(count) * sizeOf(type));
    else
      hostReduceFn(type, op)(dst, local, src, static_cast<std::size_t>(count));
  }
  void copy(void* dst, const void* src, std::size_t bytes) override { std::memmove(dst, src, bytes); }
  void zero(void* dst, std::size_t bytes) override { std::memset(dst, 0, bytes); }
  void finishAvg(DataType type, void* data, std::int64_t count, int nranks) override {
    cclab::finishAvg(data, static_cast<std::size_t>(count), type, nranks);
  }

  [[nodiscard]] long long importsOpened() const { return importsOpened_; }

 private:
  std::string job_;
  int rank_;
  int next_ = 0;
  long long importsOpened_ = 0;
  std::map<void*, proc::ShmSegment> owned_, imported_;
};

}  // namespace cclab::mpi
