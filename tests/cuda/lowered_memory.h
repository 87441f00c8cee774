// Test support shared by the lowering and staging-plan tests: the plan shapes every lowering test
// sweeps, and the host memory of every rank laid out as the CUDA executor sees it.
#pragma once

#include <algorithm>
#include <vector>

#include "collectives/cuda/buffer_alias.h"
#include "collectives/plan/interpret.h"
#include "collectives/plan/plan.h"

namespace cclab::cuda::test_support {

using plan::Algorithm;
using plan::Buf;
using plan::Collective;

struct Shape {
  Collective collective;
  Algorithm algorithm;
};

inline const Shape kShapes[] = {
    {Collective::AllReduce, Algorithm::Ring},           {Collective::AllReduce, Algorithm::Tree},
    {Collective::AllReduce, Algorithm::DoubleBinaryTree}, {Collective::AllReduce, Algorithm::HalvingDoubling}, {Collective::AllReduce, Algorithm::RecursiveDoubling},
    {Collective::AllReduce, Algorithm::Hierarchical},   {Collective::AllReduce, Algorithm::OneShot},
    {Collective::AllReduce, Algorithm::TwoShot},
    {Collective::ReduceScatter, Algorithm::Ring},       {Collective::AllGather, Algorithm::Ring},
    {Collective::Broadcast, Algorithm::Chain},          {Collective::Broadcast, Algorithm::Tree},
    {Collective::Reduce, Algorithm::Chain},             {Collective::Reduce, Algorithm::Tree},
};

// Host memory of every rank, laid out as the executor sees it (in place: input inside output).
struct Memory {
  std::vector<std::vector<double>> input, output, scratch;
  std::vector<BufferAlias> aliases;
  std::vector<plan::RankBuffers<double>> views;

  Memory(const plan::Plan& p, bool inPlace) {
    const int n = p.nranks;
    const plan::BufferCounts c = plan::bufferCounts(p.collective, n, p.count);
    input.resize(n);
    output.resize(n);
    scratch.resize(n);
    for (int r = 0; r < n; ++r) {
      const std::int64_t inOff = plan::inPlaceInputOffset(p.collective, r, p.count);
      const std::int64_t outOff = plan::inPlaceOutputOffset(p.collective, r, p.count);
      scratch[r].assign(static_cast<std::size_t>(p.scratchCount) + 1, -7.0);
      std::vector<double> data(static_cast<std::size_t>(c.input));
      for (std::size_t i = 0; i < data.size(); ++i) data[i] = 1000.0 * r + static_cast<double>(i) + 0.25;
      plan::RankBuffers<double> v;
      v.scratch = scratch[r].data();
      if (!inPlace) {
        input[r] = data;
        output[r].assign(static_cast<std::size_t>(c.output) + 1, -1.0);
        v.input = input[r].data();
        v.output = output[r].data();
        aliases.push_back({});
      } else if (p.collective == Collective::ReduceScatter) {  // output inside input
        input[r] = data;
        input[r].push_back(-1.0);
        v.input = input[r].data();
        v.output = input[r].data() + outOff;
        aliases.push_back({BufferAlias::Kind::OutputInInput, outOff});
      } else {  // input inside output
        output[r].assign(static_cast<std::size_t>(std::max(c.output, c.input + inOff)) + 1, -1.0);
        std::copy(data.begin(), data.end(), output[r].begin() + inOff);
        v.input = output[r].data() + inOff;
        v.output = output[r].data();
        aliases.push_back({BufferAlias::Kind::InputInOutput, inOff});
      }
      views.push_back(v);
    }
  }

  double* at(int rank, const plan::Range& r) const {
    const auto& v = views[static_cast<std::size_t>(rank)];
    double* base = r.buf == Buf::Input ? v.input : r.buf == Buf::Output ? v.output : v.scratch;
    return base + r.offset;
  }

  // What the collective promises: the output of every rank (root only for Reduce).
  std::vector<std::vector<double>> results(const plan::Plan& p) const {
    const plan::BufferCounts c = plan::bufferCounts(p.collective, p.nranks, p.count);
    std::vector<std::vector<double>> out;
    for (int r = 0; r < p.nranks; ++r) {
      if (p.collective == Collective::Reduce && r != p.root) continue;
      const double* o = views[static_cast<std::size_t>(r)].output;
      out.emplace_back(o, o + c.output);
    }
    return out;
  }
};

}  // namespace cclab::cuda::test_support
