// ResultLog: the footer numbers of a nccl-tests table (average busbw, failed checks).
#include "collectives/conventions/result.h"

namespace cclab::conventions {

double ResultLog::avgBusBw() const {
  double sum = 0;
  int n = 0;
  for (const ResultRow& r : rows_)
    for (const Measurement* m : {&r.outOfPlace, &r.inPlace}) {
      sum += m->busBw;
      ++n;
    }
  return n ? sum / n : 0.0;
}

int ResultLog::failedChecks() const {
  int failed = 0;
  for (const ResultRow& r : rows_)
    for (const Measurement* m : {&r.outOfPlace, &r.inPlace})
      if (m->wrong.value_or(0) > 0) ++failed;
  return failed;
}

}  // namespace cclab::conventions
