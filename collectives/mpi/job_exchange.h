// The start-of-job exchange under mpirun (collectives/conventions/job_agreement.h judges): every rank
// sends rank 0 its proposal as bytes, rank 0 judges them all and sends every rank the verdict. Point to
// point messages polled against a deadline, so a rank that never arrives is named instead of waited
// for (a blocking collective would wait forever).
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace cclab::mpi {

// This process's rank and the number of processes (MPI initialized, mpi_world.h's initialize).
int worldRank();
int worldSize();

// The verdict: an action code (the caller's) and a line.
using JobJudge = std::function<std::pair<int, std::string>(const std::vector<std::string>& proposals)>;

// Every rank calls it once, with its own proposal; rank 0 calls `judge` on all of them (index = rank)
// and every rank returns its verdict. Throws TimeoutError naming the ranks that did not arrive (rank
// 0) or rank 0 (the others) when `timeout` passes first.
std::pair<int, std::string> agreeAtStart(const std::string& mine, const JobJudge& judge, std::chrono::milliseconds timeout);

// Ends every process of the job (MPI_Abort) with `code`.
[[noreturn]] void abortJob(int code);

}  // namespace cclab::mpi
