// Crossover search: a power-of-two scan, then an exact integer bisection (crossover.h).
#include "sim/crossover.h"

#include <algorithm>

#include "collectives/core/errors.h"

namespace cclab::sim {

std::optional<Bytes> crossover(const std::function<Micros(Bytes)>& ta, const std::function<Micros(Bytes)>& tb,
                               const CrossoverSearch& search) {
  const Bytes g = search.granularity;
  if (g < 1 || search.minBytes < g || search.maxBytes < search.minBytes)
    throw InvalidArgument("crossover: need 1 <= granularity <= minBytes <= maxBytes");
  auto faster = [&](Bytes s) { return ta(s) < tb(s); };
  Bytes prev = search.minBytes / g * g;
  if (!faster(prev)) return std::nullopt;
  while (prev < search.maxBytes) {
    const Bytes next = std::min(search.maxBytes, prev * 2) / g * g;
    if (!faster(next)) {
      Bytes lo = prev / g, hi = next / g;  // in units of g: faster at lo, not at hi
      while (hi - lo > 1) {
        const Bytes mid = lo + (hi - lo) / 2;
        (faster(mid * g) ? lo : hi) = mid;
      }
      return hi * g;
    }
    prev = next;
  }
  return std::nullopt;
}

std::optional<Bytes> allReduceCrossover(const Predictor& predictor, SimAlgorithm a, SimAlgorithm b) {
  const int p = predictor.topo.nranks();
  if (p < 2) return std::nullopt;
  Predictor analytic = predictor;
  analytic.model = Model::Analytic;
  const std::int64_t e = predictor.elemSize;
  auto timeOf = [&](SimAlgorithm x) {
    return [&, x](Bytes bytes) { return analytic(plan::Collective::AllReduce, x, p, bytes / e); };
  };
  const Bytes g = e * p;
  return crossover(timeOf(a), timeOf(b), {.minBytes = (8 + g - 1) / g * g, .granularity = g});
}

}  // namespace cclab::sim
