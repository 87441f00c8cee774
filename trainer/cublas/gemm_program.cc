#include "trainer/cublas/gemm_program.h"

#include <string>

#include "collectives/core/errors.h"

namespace cclab::trainer::cublas {
namespace {

MatrixRef ref(Region r, int index, std::int64_t offset, std::int64_t ld) { return MatrixRef{r, index, offset, ld}; }

Op gemm(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, MatrixRef a, MatrixRef b, float beta,
        MatrixRef c) {
  Op op;
  op.kind = OpKind::Gemm;
  op.transA = ta;
  op.transB = tb;
  op.m = m;
  op.n = n;
  op.k = k;
  op.a = a;
  op.b = b;
  op.beta = beta;
  op.c = c;
  return op;
}

Op elementwise(OpKind kind, std::int64_t m, std::int64_t n, MatrixRef c, MatrixRef a = {}) {
  Op op;
  op.kind = kind;
  op.m = m;
  op.n = n;
  op.c = c;
  op.a = a;
  return op;
}

// Elements a column-major rows x cols matrix with leading dimension ld spans from its first element.
std::int64_t extent(std::int64_t rows, std::int64_t cols, std::int64_t ld) {
  return rows == 0 || cols == 0 ? 0 : ld * (cols - 1) + rows;
}

void checkMatrix(const Op& op, const char* which, const MatrixRef& r, std::int64_t rows, std::int64_t cols,
                 const RegionSizes& sizes) {
  const auto fail = [&](const std::string& why) {
    throw InvalidArgument(std::string(name(op.kind)) + " op: operand " + which + " (" + std::string(name(r.region)) +
                          "[" + std::to_string(r.index) + "]) " + why);
  };
  if (r.index < 0 || r.index >= sizes.count(r.region)) fail("has no such index");
  if (rows < 0 || cols < 0 || r.offset < 0) fail("has a negative shape or offset");
  if (r.ld < rows || r.ld < 1) fail("leading dimension " + std::to_string(r.ld) + " < rows " + std::to_string(rows));
  const std::int64_t end = r.offset + extent(rows, cols, r.ld);
  if (end > sizes.size(r.region, r.index))
    fail("reaches element " + std::to_string(end) + " of " + std::to_string(sizes.size(r.region, r.index)));
}

}  // namespace

std::string_view name(Region r) {
  switch (r) {
    case Region::Params: return "params";
    case Region::Grads: return "grads";
    case Region::Velocity: return "velocity";
    case Region::Activation: return "activation";
    case Region::Delta: return "delta";
    case Region::Labels: return "labels";
    case Region::LossRows: return "loss_rows";
    case Region::Correct: return "correct";
  }
  return "?";
}

std::string_view name(OpKind k) {
  switch (k) {
    case OpKind::Gemm: return "gemm";
    case OpKind::BiasRows: return "bias_rows";
    case OpKind::Relu: return "relu";
    case OpKind::ReluMask: return "relu_mask";
    case OpKind::BiasGrad: return "bias_grad";
    case OpKind::SoftmaxXent: return "softmax_xent";
    case OpKind::Sgd: return "sgd";
    case OpKind::Zero: return "zero";
  }
  return "?";
}

std::int64_t RegionSizes::size(Region r, int index) const {
  switch (r) {
    case Region::Params:
    case Region::Grads:
    case Region::Velocity: return params;
    case Region::Activation: return activations[static_cast<std::size_t>(index)];
    case Region::Delta: return delta;
    case Region::Labels: return batch;
    case Region::LossRows:
    case Region::Correct: return lossRows;
  }
  return 0;
}

int RegionSizes::count(Region r) const {
  if (r == Region::Activation) return static_cast<int>(activations.size());
  if (r == Region::Delta) return 2;
  return 1;
}

RegionSizes regionSizes(const ParameterLayout& layout, std::int64_t maxBatch, int microBatches) {
  if (maxBatch < 1 || microBatches < 1) throw InvalidArgument("regionSizes: batch and micro-batches must be >= 1");
  RegionSizes s;
  s.params = layout.parameterCount();
  for (std::int64_t w : layout.widths()) s.activations.push_back(maxBatch * w);
  s.delta = maxBatch * layout.maxWidth();
  s.batch = maxBatch;
  s.lossRows = maxBatch * microBatches;
  return s;
}

StepProgram buildStepProgram(const ParameterLayout& layout, std::int64_t batch, float lossScale, float gradScale,
                             const SgdConfig& sgd) {
  if (batch < 1) throw InvalidArgument("buildStepProgram: batch must be >= 1");
  StepProgram p;
  p.batch = batch;
  const int layers = layout.layerCount();
  const int last = layers - 1;
  for (int l = 0; l < layers; ++l) {
    const LayerSlice& s = layout.layer(l);
    const MatrixRef z = ref(Region::Activation, l + 1, 0, s.out);
    p.forward.push_back(elementwise(OpKind::BiasRows, s.out, batch, z, ref(Region::Params, 0, s.biasOffset, s.out)));
    p.forward.push_back(gemm(true, false, s.out, batch, s.in, ref(Region::Params, 0, s.weightOffset, s.in),
                             ref(Region::Activation, l, 0, s.in), 1.0F, z));
    if (l != last) p.forward.push_back(elementwise(OpKind::Relu, s.out, batch, z));
  }
  Op xent = elementwise(OpKind::SoftmaxXent, layout.classes(), batch, ref(Region::Delta, last % 2, 0, layout.classes()),
                        ref(Region::Activation, layers, 0, layout.classes()));
  xent.b = ref(Region::LossRows, 0, 0, 1);
  xent.alpha = lossScale;
  p.loss.push_back(xent);
  p.backward.resize(static_cast<std::size_t>(layers));
  for (int l = last; l >= 0; --l) {
    const LayerSlice& s = layout.layer(l);
    std::vector<Op>& ops = p.backward[static_cast<std::size_t>(l)];
    const MatrixRef dz = ref(Region::Delta, l % 2, 0, s.out);
    ops.push_back(gemm(false, true, s.in, s.out, batch, ref(Region::Activation, l, 0, s.in), dz, 1.0F,
                       ref(Region::Grads, 0, s.weightOffset, s.in)));
    ops.push_back(elementwise(OpKind::BiasGrad, s.out, batch, ref(Region::Grads, 0, s.biasOffset, s.out), dz));
    if (l > 0) {
      const MatrixRef da = ref(Region::Delta, (l - 1) % 2, 0, s.in);
      ops.push_back(gemm(false, false, s.in, batch, s.out, ref(Region::Params, 0, s.weightOffset, s.in), dz, 0.0F, da));
      ops.push_back(elementwise(OpKind::ReluMask, s.in, batch, da, ref(Region::Activation, l, 0, s.in)));
    }
  }
  const std::int64_t count = layout.parameterCount();
  p.zeroGrads.push_back(elementwise(OpKind::Zero, 1, count, ref(Region::Grads, 0, 0, 1)));
  Op step = elementwise(OpKind::Sgd, 1, count, ref(Region::Params, 0, 0, 1), ref(Region::Grads, 0, 0, 1));
  step.b = ref(Region::Velocity, 0, 0, 1);
  step.alpha = gradScale;
  step.sgd = sgd;
  p.sgd.push_back(step);
  return p;
}

std::vector<Op> lossFor(const StepProgram& p, int micro) {
  std::vector<Op> ops = p.loss;
  for (Op& op : ops) op.b.offset = static_cast<std::int64_t>(micro) * p.batch;
  return ops;
}

void checkOp(const Op& op, const RegionSizes& sizes) {
  switch (op.kind) {
    case OpKind::Gemm:
      checkMatrix(op, "a", op.a, op.transA ? op.k : op.m, op.transA ? op.m : op.k, sizes);
      checkMatrix(op, "b", op.b, op.transB ? op.n : op.k, op.transB ? op.k : op.n, sizes);
      checkMatrix(op, "c", op.c, op.m, op.n, sizes);
      return;
    case OpKind::BiasRows:
      checkMatrix(op, "c", op.c, op.m, op.n, sizes);
      checkMatrix(op, "a", op.a, op.m, 1, sizes);
      return;
    case OpKind::Relu: checkMatrix(op, "c", op.c, op.m, op.n, sizes); return;
    case OpKind::ReluMask:
    case OpKind::BiasGrad:
      checkMatrix(op, "c", op.c, op.m, op.kind == OpKind::BiasGrad ? 1 : op.n, sizes);
      checkMatrix(op, "a", op.a, op.m, op.n, sizes);
      return;
    case OpKind::SoftmaxXent:
      checkMatrix(op, "a", op.a, op.m, op.n, sizes);
      checkMatrix(op, "c", op.c, op.m, op.n, sizes);
      checkMatrix(op, "labels", MatrixRef{Region::Labels, 0, 0, 1}, 1, op.n, sizes);
      if (op.b.region != Region::LossRows) throw InvalidArgument("softmax_xent op: operand b must be loss_rows");
      checkMatrix(op, "b", op.b, 1, op.n, sizes);
      return;
    case OpKind::Sgd:
      checkMatrix(op, "b", op.b, 1, op.n, sizes);
      [[fallthrough]];
    case OpKind::Zero:
      checkMatrix(op, "c", op.c, 1, op.n, sizes);
      if (op.kind == OpKind::Sgd) checkMatrix(op, "a", op.a, 1, op.n, sizes);
      return;
  }
}

void checkProgram(const StepProgram& p, const RegionSizes& sizes) {
  for (const auto* list : {&p.forward, &p.loss, &p.zeroGrads, &p.sgd})
    for (const Op& op : *list) checkOp(op, sizes);
  for (const auto& layer : p.backward)
    for (const Op& op : layer) checkOp(op, sizes);
}

}  // namespace cclab::trainer::cublas
