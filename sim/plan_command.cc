// `cclab-sim plan` (plan_command.h).
#include "sim/plan_command.h"

#include <algorithm>
#include <iostream>
#include <limits>

#include "collectives/conventions/limits.h"
#include "collectives/conventions/output_file.h"
#include "collectives/core/errors.h"
#include "collectives/plan/algorithm_file.h"
#include "collectives/plan/op_source.h"
#include "collectives/plan/plan.h"

namespace cclab::sim {
namespace {

// An export our own importer would refuse (algorithm_file.h's limits) is refused before it is made:
// a 1024-rank ring took 4.8 GB to write a file no reader of ours takes.
constexpr std::string_view kImporterLimit = "the limit our importer applies, algorithm_file.h";

// Before the plan is built: the ranks, and the plan's non-empty ops, each one step of the file at
// least (the ring's and hier's rules count them without making the plan).
void checkExportableShape(const PlanCommand& cmd, plan::Collective c, plan::Algorithm a) {
  conventions::requireAtMost(cmd.nranks, plan::kMaxFileRanks, "--export: -g", kImporterLimit);
  const auto ops = plan::makeOpSource(c, a, cmd.nranks, cmd.count, cmd.root, {cmd.channels, cmd.ranksPerNode});
  const std::int64_t all = std::numeric_limits<std::int64_t>::max();  // counted whole: the refusal names the count
  conventions::requireAtMost(ops->opSlices(0, all), plan::kMaxFileSteps,
                             "--export: the plan's ops (one step of the file each, at least)", kImporterLimit);
}

// The steps (MSCCL XML) or ops (MSCCL++ JSON) the exporter writes for the unit plan, as its reader
// counts them: XML one step per op; JSON a put and a signal per send, a wait per receive and a reduce
// after it, a wait per peer and one reduce per ReduceAll, a copy per copy.
std::int64_t fileSteps(const plan::Plan& u, plan::FileFormat f) {
  std::int64_t steps = 0;
  for (const auto& ops : u.ranks)
    for (const plan::Op& op : ops) {
      if (f == plan::FileFormat::MscclXml) {
        ++steps;
        continue;
      }
      switch (op.kind) {
        case plan::OpKind::Send: steps += 2; break;
        case plan::OpKind::Recv: steps += 1; break;
        case plan::OpKind::RecvReduce: steps += 2; break;
        case plan::OpKind::ReduceAll: steps += u.nranks; break;
        case plan::OpKind::Copy: steps += 1; break;
      }
    }
  return steps;
}

// The unit plan (the plan's ranges over their gcd) against the importer's chunk and step limits.
void checkExportable(const plan::AlgorithmFile& file, plan::FileFormat f) {
  const plan::Plan& u = file.unit;
  const plan::BufferCounts chunks = plan::bufferCounts(u.collective, u.nranks, u.count);
  conventions::requireAtMost(std::max({chunks.input, chunks.output, u.scratchCount}), plan::kMaxFileChunks,
                             "--export: the chunks of one buffer (--count over the gcd of the plan's ranges)", kImporterLimit);
  const std::int64_t n = u.nranks;
  conventions::requireAtMost((std::max(chunks.input, chunks.output) + u.scratchCount) * n * n, plan::kMaxFileCheckCells,
                             "--export: the file's chunks x ranks^2 (what the importer's check holds)", kImporterLimit);
  conventions::requireAtMost(fileSteps(u, f), plan::kMaxFileSteps, "--export: the file's steps", kImporterLimit);
}

}  // namespace

int runPlanCommand(const PlanCommand& cmd) {
  const plan::Collective c = plan::parseCollective(cmd.collective);
  const plan::Algorithm a = plan::parseAlgorithm(cmd.algo);
  if (a == plan::Algorithm::Auto) throw InvalidArgument("--algo auto picks per call; name an algorithm to print or export");
  const bool toStdout = cmd.output.empty() || cmd.output == "-";
  if (!toStdout) conventions::checkWritable(cmd.output, "-o");
  const bool exporting = !cmd.exportFormat.empty();
  const plan::FileFormat format = exporting ? plan::parseFileFormat(cmd.exportFormat) : plan::FileFormat::MscclXml;
  if (exporting) checkExportableShape(cmd, c, a);
  const plan::Plan p = plan::makePlan(c, a, cmd.nranks, cmd.count, cmd.root, {cmd.channels, cmd.ranksPerNode});
  std::string text;
  if (!exporting) {
    text = plan::dump(p);
  } else {
    const std::string name = !cmd.name.empty() ? cmd.name : plan::isFileAlgorithm(a) ? plan::algorithmFileOf(a).name : std::string(plan::name(a));
    const plan::AlgorithmFile file = plan::unitOf(p, name);
    checkExportable(file, format);
    text = plan::exportAlgorithm(file, format);
  }
  if (toStdout)
    std::cout << text;
  else
    conventions::writeFileAtomically(cmd.output, text);
  return 0;
}

}  // namespace cclab::sim
