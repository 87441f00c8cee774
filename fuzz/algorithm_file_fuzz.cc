// libFuzzer target: the algorithm-file readers (collectives/plan/algorithm_file.h: MSCCL XML and MSCCL++
// JSON, chosen by the first character). Any bytes must either import or throw; an imported algorithm
// must be a valid unit plan that exports to both formats and imports back to the same plan, and run
// (or be refused) at a few counts.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <string_view>

#include "collectives/core/errors.h"
#include "collectives/plan/algorithm_file.h"
#include "collectives/plan/validate.h"

namespace plan = cclab::plan;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  plan::AlgorithmFile file;
  try {
    file = plan::importAlgorithm(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const cclab::InvalidArgument&) {
    return 0;  // refused with a reason: the contract
  }
  if (!plan::validate(file.unit, {.symbolic = false}).empty()) std::abort();
  for (plan::FileFormat f : {plan::FileFormat::MscclXml, plan::FileFormat::MscclppJson}) {
    plan::AlgorithmFile back;
    try {
      back = plan::importAlgorithm(plan::exportAlgorithm(file, f));
    } catch (const std::exception&) {
      std::abort();  // what was accepted must write and read back
    }
    if (plan::dump(back.unit) != plan::dump(file.unit) || back.unit.deps != file.unit.deps) std::abort();
  }
  for (std::int64_t count : {std::int64_t{0}, std::int64_t{1}, file.unit.count * 3 + 1}) {
    try {
      const plan::Plan p = plan::instantiate(file, plan::Algorithm::Ring, count);
      if (!plan::validate(p, {.symbolic = false}).empty()) std::abort();
    } catch (const cclab::InvalidArgument&) {
    }
  }
  return 0;
}
