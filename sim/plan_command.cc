// `cclab-sim plan` (plan_command.h).
#include "sim/plan_command.h"

#include <iostream>

#include "collectives/conventions/output_file.h"
#include "collectives/core/errors.h"
#include "collectives/plan/algorithm_file.h"
#include "collectives/plan/plan.h"

namespace cclab::sim {

int runPlanCommand(const PlanCommand& cmd) {
  const plan::Collective c = plan::parseCollective(cmd.collective);
  const plan::Algorithm a = plan::parseAlgorithm(cmd.algo);
  if (a == plan::Algorithm::Auto) throw InvalidArgument("--algo auto picks per call; name an algorithm to print or export");
  const bool toStdout = cmd.output.empty() || cmd.output == "-";
  if (!toStdout) conventions::checkWritable(cmd.output, "-o");
  const plan::Plan p = plan::makePlan(c, a, cmd.nranks, cmd.count, cmd.root, {cmd.channels, cmd.ranksPerNode});
  std::string text;
  if (cmd.exportFormat.empty()) {
    text = plan::dump(p);
  } else {
    const plan::FileFormat f = plan::parseFileFormat(cmd.exportFormat);
    const std::string name = !cmd.name.empty() ? cmd.name : plan::isFileAlgorithm(a) ? plan::algorithmFileOf(a).name : std::string(plan::name(a));
    text = plan::exportAlgorithm(plan::unitOf(p, name), f);
  }
  if (toStdout)
    std::cout << text;
  else
    conventions::writeFileAtomically(cmd.output, text);
  return 0;
}

}  // namespace cclab::sim
