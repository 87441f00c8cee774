// `cclab-sim plan`: print a plan, or write it as an algorithm file (MSCCL XML, MSCCL++ JSON), for any
// algorithm a plan has: a built-in one or another file ("file:PATH"), so files convert between formats.
#pragma once

#include <cstdint>
#include <string>

namespace cclab::sim {

struct PlanCommand {
  std::string collective = "allreduce";
  std::string algo = "ring";
  int nranks = 8;
  std::int64_t count = 1 << 20;  // elements; the file's chunks are the plan's ranges over their gcd
  int root = 0;
  int channels = 1;
  int ranksPerNode = 0;
  std::string exportFormat;  // "", msccl-xml, mscclpp-json
  std::string name;          // the algorithm's name in the file (default: the algorithm's)
  std::string output;        // "" or "-": stdout
};

// Throws cclab::InvalidArgument (exit 2) for a bad name, shape or file.
int runPlanCommand(const PlanCommand& cmd);

}  // namespace cclab::sim
