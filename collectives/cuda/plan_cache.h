// Lowered plans, cached: a collective call's schedule depends only on the request below, so a
// benchmark loop lowers once. Thread-safe; bounded (cleared when full).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "collectives/cuda/buffer_alias.h"
#include "collectives/cuda/lowering.h"
#include "collectives/plan/plan.h"

namespace cclab::cuda {

struct PlanRequest {
  plan::Collective collective = plan::Collective::AllReduce;
  plan::Algorithm algorithm = plan::Algorithm::Ring;
  int nranks = 1;
  std::int64_t count = 0;
  int root = 0;
  std::int64_t sliceElems = 0;
  std::vector<BufferAlias> aliases;  // one per rank
  plan::PlanShape shape = {};        // channels and ranks per node (last: positional initializers stay valid)

  // Bytes that identify the request (a map key).
  [[nodiscard]] std::string key() const;
};

class LoweredPlanCache {
 public:
  static constexpr std::size_t kMaxEntries = 256;
  std::shared_ptr<const LoweredPlan> get(const PlanRequest& request);

 private:
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const LoweredPlan>> plans_;
};

// Appends the bytes of a trivially copyable value to a key.
template <class T>
void appendKey(std::string& key, const T& value) {
  key.append(reinterpret_cast<const char*>(&value), sizeof(T));
}

}  // namespace cclab::cuda
