#include "trainer/device/compute_model.h"

#include <cmath>
#include <cstdlib>
#include <string>

#include "collectives/core/errors.h"

namespace cclab::trainer {
namespace {

constexpr double kFlopsPerTflop = 1e12;
constexpr const char* kBf16 = "bf16 tensor core, dense (mixed precision: fp32 parameters and gradients)";

ComputeModel named(const char* name, double tflops, const char* source) {
  return {name, tflops * kFlopsPerTflop, kBf16, source};
}

}  // namespace

ComputeModel parseComputeModel(std::string_view s) {
  if (s.empty() || s == "none") return {};
  if (s == "h100") return named("h100", kH100Bf16DenseTflops, "NVIDIA H100 SXM5 datasheet: 989 TFLOP/s bf16 dense");
  if (s == "h200") return named("h200", kH200Bf16DenseTflops, "NVIDIA H200 SXM datasheet: 1979 TFLOP/s bf16 with sparsity = 989 dense");
  if (s == "a100") return named("a100", kA100Bf16DenseTflops, "NVIDIA A100 SXM4 datasheet: 312 TFLOP/s bf16 dense");
  const std::string text(s);
  char* end = nullptr;
  const double tflops = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || !std::isfinite(tflops) || tflops <= 0.0 || tflops > 1e6)
    throw InvalidArgument("--compute-model '" + text + "': expected h100, h200, a100, none or a positive number of TFLOP/s");
  ComputeModel m;
  m.name = text + "tflops";
  m.flopsPerS = tflops * kFlopsPerTflop;
  m.precision = "as given";
  m.source = "--compute-model " + text + " (TFLOP/s, given on the command line)";
  return m;
}

}  // namespace cclab::trainer
