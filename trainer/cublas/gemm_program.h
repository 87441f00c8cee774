// The MLP's step as data, in cuBLAS's column-major terms: a list of GEMMs and small elementwise ops
// over named device regions. The cuBLAS path (cublas_runner.cu) executes it with cublasSgemm and
// kernels; the CPU reference (interpret.h) executes the very same list, which is how the device
// path's host logic is tested on a machine without a GPU (tests/trainer/cublas_test.cc).
//
// Row-major (the CPU Mlp, model/mlp.h) to column-major: a row-major r x c matrix with row stride ld is
// the column-major c x r matrix with leading dimension ld, i.e. its transpose. So, per layer l with
// A = activations (batch x in), W (out x in), Z (batch x out), all as the CPU Mlp stores them:
//   forward   Z^T  = W · A^T           gemm(T, N, m=out, n=batch, k=in,  W ld=in,  A ld=in,  Z ld=out), beta 1 over the bias
//   backward  dW^T += A^T · dZ         gemm(N, T, m=in,  n=out,   k=batch, A ld=in, dZ ld=out, dW ld=in), beta 1
//             dA^T  = W^T · dZ^T       gemm(N, N, m=in,  n=batch, k=out, W ld=in,  dZ ld=out, dA ld=in), beta 0
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trainer/model/layout.h"
#include "trainer/model/sgd.h"

namespace cclab::trainer::cublas {

// Where an operand lives. Activation has one region per layer boundary (index 0 = input,
// l + 1 = output of layer l); Delta has two (dL/dZ alternates between them by layer parity, as in
// the CPU Mlp); LossRows holds one double per sample, Correct one int per sample, Labels the batch's
// labels (int).
enum class Region : std::uint8_t { Params, Grads, Velocity, Activation, Delta, Labels, LossRows, Correct };
std::string_view name(Region r);

struct MatrixRef {
  Region region = Region::Params;
  int index = 0;            // Activation / Delta index
  std::int64_t offset = 0;  // elements into the region
  std::int64_t ld = 0;      // leading dimension (column-major), elements
};

enum class OpKind : std::uint8_t {
  Gemm,         // c = alpha·op(a)·op(b) + beta·c; c is m x n, op(a) m x k, op(b) k x n (beta 0: c is not read)
  BiasRows,     // c (m x n) = a[i] in every column: the bias before the forward GEMM's beta = 1
  Relu,         // c = max(c, 0) over m x n
  ReluMask,     // c[i,j] = 0 where a[i,j] <= 0 (a: the layer's input activation, same shape)
  BiasGrad,     // c[i] (vector of m) += sum over j of a[i,j] (a: dL/dZ, m x n), j in order
  SoftmaxXent,  // per column j of a (m classes x n samples), label Labels[j]: LossRows and Correct at
                // b.offset + j, c = (softmax - onehot)·alpha
  Sgd,          // over n elements: Params, Velocity updated from Grads·alpha (SgdConfig in the op)
  Zero,         // c[0, n) = 0 (a 1-D region)
};
std::string_view name(OpKind k);

struct Op {
  OpKind kind = OpKind::Gemm;
  bool transA = false;
  bool transB = false;
  std::int64_t m = 0, n = 0, k = 0;
  float alpha = 1.0F;
  float beta = 0.0F;
  MatrixRef a, b, c;
  SgdConfig sgd;  // Sgd only
};

// Sizes of every region for a model and a largest batch (elements of the region's type).
struct RegionSizes {
  std::int64_t params = 0;
  std::vector<std::int64_t> activations;  // per index
  std::int64_t delta = 0;                 // each of the two
  std::int64_t batch = 0;                 // Labels
  std::int64_t lossRows = 0;              // LossRows, Correct: one per sample of every micro-batch of a step
  [[nodiscard]] std::int64_t size(Region r, int index) const;
  [[nodiscard]] int count(Region r) const;  // how many indices the region has
};
RegionSizes regionSizes(const ParameterLayout& layout, std::int64_t maxBatch, int microBatches = 1);

// One micro-batch's program. backward[l] is layer l's backward; after it layer l's parameter
// gradients are final (the bucket hook fires there, as in Mlp::backward).
struct StepProgram {
  std::int64_t batch = 0;
  std::vector<Op> forward;              // layers 0..L-1
  std::vector<Op> loss;                 // softmax cross-entropy of the logits into dL/dlogits
                                        // (its b.offset: the micro-batch's first loss row; see lossFor)
  std::vector<std::vector<Op>> backward;  // [l], run from L-1 down to 0
  std::vector<Op> zeroGrads;
  std::vector<Op> sgd;                  // alpha = the gradient scale (1 / workers)
};

// lossScale = 1 / (the worker's batch): the gradient of the mean loss, as GradientStep.
StepProgram buildStepProgram(const ParameterLayout& layout, std::int64_t batch, float lossScale, float gradScale,
                             const SgdConfig& sgd);

// The loss op of micro-batch `micro`: its rows go to LossRows[micro * batch, +batch).
std::vector<Op> lossFor(const StepProgram& p, int micro);

// Throws InvalidArgument naming the op when an operand reaches outside its region or a leading
// dimension is smaller than the rows it strides over: what would be an out-of-bounds device access.
void checkOp(const Op& op, const RegionSizes& sizes);
void checkProgram(const StepProgram& p, const RegionSizes& sizes);

}  // namespace cclab::trainer::cublas
