// Device code shared by the standalone kernels (kernels.cu) and the low-latency kernel
// (ll_kernel.cu): element types, reduce operators, and reduceCopy, the one loop that moves data.
//
// reduceCopy(dst, local, src, n): dst[i] = local[i] (op) src[i], or dst[i] = src[i] for a copy. It
// moves 16-byte packs (uint4) with kUnroll independent loads per source in flight, coalesced across
// the warp, when the three pointers share their alignment mod 16; a scalar head and tail take the
// rest (odd counts, slices that start mid-pack). Loads and stores bypass L1 (.cg): the low-latency
// kernel reads memory that other blocks of the same launch wrote a step earlier.
// Half and bfloat16 compute in float and round once (as the host's reduce, dtype.cc); int8/uint8
// compute in int and wrap, as the host does.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <cstring>

#include "collectives/core/dtype.h"
#include "collectives/cuda/launch_geometry.h"

namespace cclab::cuda::device {

// ---- element types: storage in memory, computation in registers ----
template <class T, class C = T>
struct NativeElem {
  using Storage = T;
  using Compute = C;
  __device__ static C toCompute(T s) { return static_cast<C>(s); }
  __device__ static T fromCompute(C c) { return static_cast<T>(c); }
};
struct HalfElem {
  using Storage = unsigned short;
  using Compute = float;
  __device__ static float toCompute(unsigned short s) { return __half2float(__ushort_as_half(s)); }
  __device__ static unsigned short fromCompute(float f) { return __half_as_ushort(__float2half_rn(f)); }
};
struct BFloat16Elem {
  using Storage = unsigned short;
  using Compute = float;
  __device__ static float toCompute(unsigned short s) { return __bfloat162float(__ushort_as_bfloat16(s)); }
  __device__ static unsigned short fromCompute(float f) { return __bfloat16_as_ushort(__float2bfloat16_rn(f)); }
};
using Float32Elem = NativeElem<float>;
using Float64Elem = NativeElem<double>;
using Int32Elem = NativeElem<std::int32_t>;
using Int8Elem = NativeElem<std::int8_t, int>;
using UInt8Elem = NativeElem<std::uint8_t, int>;

// ---- operators (the host's definitions, dtype.cc) ----
struct SumOp {
  template <class C>
  __device__ static C apply(C a, C b) { return a + b; }
};
struct ProdOp {
  template <class C>
  __device__ static C apply(C a, C b) { return a * b; }
};
struct MinOp {
  template <class C>
  __device__ static C apply(C a, C b) { return b < a ? b : a; }
};
struct MaxOp {
  template <class C>
  __device__ static C apply(C a, C b) { return a < b ? b : a; }
};

// Calls f(Elem{}) for the element type of t.
template <class F>
void dispatchType(DataType t, F&& f) {
  switch (t) {
    case DataType::Float32: f(Float32Elem{}); return;
    case DataType::Float64: f(Float64Elem{}); return;
    case DataType::Float16: f(HalfElem{}); return;
    case DataType::BFloat16: f(BFloat16Elem{}); return;
    case DataType::Int32: f(Int32Elem{}); return;
    case DataType::Int8: f(Int8Elem{}); return;
    case DataType::UInt8: f(UInt8Elem{}); return;
  }
}
// Calls f(Op{}); Avg reduces as Sum (the division comes at the end, finishAvg).
template <class F>
void dispatchOp(ReduceOp op, F&& f) {
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Avg: f(SumOp{}); return;
    case ReduceOp::Prod: f(ProdOp{}); return;
    case ReduceOp::Min: f(MinOp{}); return;
    case ReduceOp::Max: f(MaxOp{}); return;
  }
}

// ---- loads and stores that bypass L1 ----
__device__ inline uint4 loadPack(const uint4* p) {
  uint4 v;
  asm volatile("ld.global.cg.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p)
               : "memory");
  return v;
}
__device__ inline void storePack(uint4* p, uint4 v) {
  asm volatile("st.global.cg.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}
template <class S>
__device__ inline S loadScalar(const S* p) {
  S out;
  if constexpr (sizeof(S) == 1) {
    unsigned short v;
    asm volatile("ld.global.cg.u8 %0, [%1];" : "=h"(v) : "l"(p) : "memory");
    const auto b = static_cast<unsigned char>(v);
    memcpy(&out, &b, 1);
  } else if constexpr (sizeof(S) == 2) {
    unsigned short v;
    asm volatile("ld.global.cg.u16 %0, [%1];" : "=h"(v) : "l"(p) : "memory");
    memcpy(&out, &v, 2);
  } else if constexpr (sizeof(S) == 4) {
    unsigned int v;
    asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    memcpy(&out, &v, 4);
  } else {
    unsigned long long v;
    asm volatile("ld.global.cg.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    memcpy(&out, &v, 8);
  }
  return out;
}

template <class E, class Op>
__device__ inline typename E::Storage combine(typename E::Storage a, typename E::Storage b) {
  return E::fromCompute(Op::apply(E::toCompute(a), E::toCompute(b)));
}

template <class E, class Op>
__device__ inline uint4 combinePack(uint4 a, uint4 b) {
  using S = typename E::Storage;
  constexpr int kElems = kPackBytes / static_cast<int>(sizeof(S));
  S x[kElems], y[kElems];
  memcpy(x, &a, kPackBytes);
  memcpy(y, &b, kPackBytes);
#pragma unroll
  for (int i = 0; i < kElems; ++i) x[i] = combine<E, Op>(x[i], y[i]);
  memcpy(&a, x, kPackBytes);
  return a;
}

// dst[i] = local[i] (op) src[i] (kReduce) or src[i], i in [0, n); this thread is `worker` of `nworkers`.
template <class E, class Op, bool kReduce>
__device__ void reduceCopy(typename E::Storage* dst, const typename E::Storage* local, const typename E::Storage* src,
                           std::int64_t n, std::int64_t worker, std::int64_t nworkers) {
  using S = typename E::Storage;
  constexpr std::int64_t kElems = kPackBytes / static_cast<std::int64_t>(sizeof(S));
  auto misalign = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % kPackBytes; };
  auto scalar = [&](std::int64_t i) {
    const S b = loadScalar(src + i);
    if constexpr (kReduce)
      dst[i] = combine<E, Op>(loadScalar(local + i), b);
    else
      dst[i] = b;
  };

  // Head: scalar up to the first 16-byte boundary, or everything when the pointers disagree.
  std::int64_t head = n;
  const std::uintptr_t m = misalign(dst);
  if (misalign(src) == m && (!kReduce || misalign(local) == m) && m % sizeof(S) == 0)
  {
    const auto toBoundary = static_cast<std::int64_t>((kPackBytes - m) % kPackBytes / sizeof(S));
    head = toBoundary < n ? toBoundary : n;
  }
  for (std::int64_t i = worker; i < head; i += nworkers) scalar(i);

  const std::int64_t packs = (n - head) / kElems;
  auto* d4 = reinterpret_cast<uint4*>(dst + head);
  const auto* s4 = reinterpret_cast<const uint4*>(src + head);
  const auto* l4 = kReduce ? reinterpret_cast<const uint4*>(local + head) : nullptr;
  const std::int64_t group = nworkers * kUnroll;
  std::int64_t base = 0;
  for (; base + group <= packs; base += group) {  // full groups: kUnroll loads per source in flight
    uint4 b[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) b[u] = loadPack(s4 + base + u * nworkers + worker);
    if constexpr (kReduce) {
      uint4 a[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) a[u] = loadPack(l4 + base + u * nworkers + worker);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) b[u] = combinePack<E, Op>(a[u], b[u]);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) storePack(d4 + base + u * nworkers + worker, b[u]);
  }
  for (std::int64_t q = base + worker; q < packs; q += nworkers) {
    uint4 b = loadPack(s4 + q);
    if constexpr (kReduce) b = combinePack<E, Op>(loadPack(l4 + q), b);
    storePack(d4 + q, b);
  }
  for (std::int64_t i = head + packs * kElems + worker; i < n; i += nworkers) scalar(i);
}

}  // namespace cclab::cuda::device
