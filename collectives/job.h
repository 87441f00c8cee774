// A job of several processes (under mpirun), as every tool starts one: MPI initialized first, before
// anything can exit (a process that leaves before MPI_Init leaves the others blocked in theirs), then
// the start-of-job agreement (collectives/conventions/job_agreement.h): every rank's configuration
// compared, memory counted per host, one verdict for all. Without mpirun (or without the process
// backend in this build) there is one process and nothing to agree on.
#pragma once

#include <chrono>
#include <string_view>

#include "collectives/conventions/job_agreement.h"

namespace cclab {

// The agreement waits this long for every rank (they start together: MPI_Init has just returned).
inline constexpr std::chrono::milliseconds kJobAgreementTimeout{60000};

// Under mpirun (with the process backend built): MPI_Init now. Every tool's main() calls it first.
void startJob();
// True when this process is one of several started by mpirun (startJob called).
[[nodiscard]] bool jobSpansProcesses();
// This process's rank and the number of processes (0 and 1 without mpirun).
[[nodiscard]] int jobProcessRank();
[[nodiscard]] int jobProcessCount();

// Every process calls it once with its proposal (host and MemAvailable filled in here); returns the common
// verdict. Rank 0 prints a refusal as "<tool>: <line>" on stderr. A rank that does not arrive within
// `timeout` is named by rank 0 and the job is ended (MPI_Abort, exit 1). Without mpirun: judge({p}), nothing printed.
[[nodiscard]] conventions::JobVerdict agreeOnJob(std::string_view tool, conventions::JobProposal p,
                                                 std::chrono::milliseconds timeout = kJobAgreementTimeout);

}  // namespace cclab
