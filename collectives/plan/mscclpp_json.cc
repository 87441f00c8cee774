// placeholder
#include "collectives/core/errors.h"
#include "collectives/plan/algorithm_file.h"
namespace cclab::plan {
AlgorithmFile importMscclppJson(std::string_view) { throw InvalidArgument("MSCCL++ JSON: not built"); }
std::string exportMscclppJson(const AlgorithmFile&) { throw InvalidArgument("MSCCL++ JSON: not built"); }
}
