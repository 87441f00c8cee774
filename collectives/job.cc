// The start of a multi-process job (job.h).
#include "collectives/job.h"

#include <unistd.h>

#include <array>
#include <cstdio>
#include <string>
#include <vector>

#include "collectives/conventions/memory_budget.h"
#include "collectives/core/errors.h"
#ifdef CCLAB_WITH_PROC_BACKEND
#include "collectives/mpi/job_exchange.h"
#include "collectives/mpi/mpi_world.h"
#endif

namespace cclab {

void startJob() {
#ifdef CCLAB_WITH_PROC_BACKEND
  if (mpi::launchedByMpi()) mpi::initialize();
#endif
}

bool jobSpansProcesses() {
#ifdef CCLAB_WITH_PROC_BACKEND
  return mpi::launchedByMpi();
#else
  return false;
#endif
}

int jobProcessRank() {
#ifdef CCLAB_WITH_PROC_BACKEND
  if (jobSpansProcesses()) {
    mpi::initialize();
    return mpi::worldRank();
  }
#endif
  return 0;
}

int jobProcessCount() {
#ifdef CCLAB_WITH_PROC_BACKEND
  if (jobSpansProcesses()) {
    mpi::initialize();
    return mpi::worldSize();
  }
#endif
  return 1;
}

conventions::JobVerdict agreeOnJob(std::string_view tool, conventions::JobProposal p, std::chrono::milliseconds timeout) {
  std::array<char, 256> host{};
  gethostname(host.data(), host.size() - 1);
  p.host = host.data();
  p.hostAvailable = conventions::hostMemoryAvailable().value_or(-1);
#ifdef CCLAB_WITH_PROC_BACKEND
  if (jobSpansProcesses()) {
    mpi::initialize();
    std::pair<int, std::string> verdict;
    try {
      verdict = mpi::agreeAtStart(
          conventions::serialize(p),
          [](const std::vector<std::string>& all) {
            std::vector<conventions::JobProposal> proposals;
            proposals.reserve(all.size());
            for (const std::string& text : all) proposals.push_back(conventions::parseProposal(text));
            const conventions::JobVerdict v = conventions::judge(proposals);
            return std::pair<int, std::string>(static_cast<int>(v.action), v.message);
          },
          timeout);
    } catch (const Error& e) {
      std::fflush(stdout);
      std::fprintf(stderr, "%.*s: %s\n", static_cast<int>(tool.size()), tool.data(), e.what());
      std::fflush(stderr);
      mpi::abortJob(1);
    }
    const conventions::JobVerdict v{static_cast<conventions::JobAction>(verdict.first), verdict.second};
    if (v.action == conventions::JobAction::Refuse && mpi::worldRank() == 0) {
      std::fflush(stdout);
      std::fprintf(stderr, "%.*s: %s\n", static_cast<int>(tool.size()), tool.data(), v.message.c_str());
      std::fflush(stderr);
    }
    return v;
  }
#endif
  (void)tool;
  (void)timeout;
  return conventions::judge(std::span<const conventions::JobProposal>(&p, 1));
}

}  // namespace cclab
