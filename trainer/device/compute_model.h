// The emulated device (`--compute-model`): each layer's forward, backward and optimiser time is its
// FLOP count divided by a rate, instead of what this CPU took. The math still runs on the CPU (so the
// accuracy is real); only the time accounted for it changes. Communication stays real.
//
// Rates are peak dense (no structured sparsity) BF16 tensor-core rates from the vendors' datasheets:
// the model assumes mixed-precision training (bf16 matmuls, fp32 parameters and gradients, as
// torch.autocast + DDP), so gradients are allreduced as fp32 (4 bytes each), which is what the
// trainer does. Peak rates are upper bounds: real kernels reach a fraction of them, so give a
// measured effective rate as a number (`--compute-model 350`, TFLOP/s) when one is known.
#pragma once

#include <string>
#include <string_view>

namespace cclab::trainer {

struct ComputeModel {
  std::string name;       // "h100", "h200", "a100" or "<number>tflops"; empty: none (CPU time)
  double flopsPerS = 0.0; // 0: none
  std::string precision;  // what the rate is for
  std::string source;     // where the rate comes from

  [[nodiscard]] bool active() const { return flopsPerS > 0.0; }
  // Modelled time of `flops` FLOPs, ns.
  [[nodiscard]] double ns(double flops) const { return flops / flopsPerS * 1e9; }
};

// NVIDIA H100 SXM5 datasheet: BF16 tensor core 989 TFLOP/s dense (1979 "with sparsity"); the same
// sheet gives TF32 494.7 dense and FP32 (non-tensor) 67.
inline constexpr double kH100Bf16DenseTflops = 989.4;
// NVIDIA H200 SXM datasheet: BF16 tensor core 1979 TFLOP/s with sparsity, i.e. 989.4 dense (the same
// GPU die as H100 SXM; H200 adds memory: 141 GB HBM3e at 4.8 TB/s).
inline constexpr double kH200Bf16DenseTflops = 989.4;
// NVIDIA A100 (SXM4) datasheet: BF16 tensor core 312 TFLOP/s dense (624 with sparsity); TF32 156 dense,
// FP32 19.5.
inline constexpr double kA100Bf16DenseTflops = 312.0;

// "h100", "h200", "a100", or a positive finite number of TFLOP/s ("350", "350.5"); "" or "none": none.
// Throws InvalidArgument (one line naming the choices).
ComputeModel parseComputeModel(std::string_view s);

}  // namespace cclab::trainer
