// The start-of-job exchange (job_exchange.h): proposals to rank 0, the verdict back, every wait bounded.
#include "collectives/mpi/job_exchange.h"

#include <mpi.h>

#include <cstdlib>
#include <string_view>
#include <thread>

#include "collectives/conventions/job_agreement.h"
#include "collectives/core/errors.h"
#include "collectives/mpi/mpi_world.h"

namespace cclab::mpi {
namespace {

// Tags of the exchange. It runs before any executor exists and consumes every message it sends, so
// it shares MPI_COMM_WORLD with them; the tags stay clear of the executors' small ones anyway.
constexpr int kProposalTag = 32001;
constexpr int kVerdictTag = 32002;
// Between polls: a one-time exchange, so a short sleep leaves the cores to ranks still parsing.
constexpr auto kPollPause = std::chrono::microseconds(200);

using Clock = std::chrono::steady_clock;

std::string seconds(std::chrono::milliseconds t) { return std::to_string(t.count() / 1000.0).substr(0, 4) + " s"; }

// A message from `source` (or any) with `tag`, if one has come: its bytes and sender.
bool tryReceive(int source, int tag, std::string& bytes, int& from) {
  int flag = 0;
  MPI_Status status;
  check(MPI_Iprobe(source, tag, MPI_COMM_WORLD, &flag, &status), "MPI_Iprobe (job agreement)");
  if (!flag) return false;
  int count = 0;
  check(MPI_Get_count(&status, MPI_CHAR, &count), "MPI_Get_count (job agreement)");
  bytes.assign(static_cast<std::size_t>(count), '\0');
  check(MPI_Recv(bytes.data(), count, MPI_CHAR, status.MPI_SOURCE, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv (job agreement)");
  from = status.MPI_SOURCE;
  return true;
}

bool allDone(std::vector<MPI_Request>& requests) {
  if (requests.empty()) return true;
  int flag = 0;
  check(MPI_Testall(static_cast<int>(requests.size()), requests.data(), &flag, MPI_STATUSES_IGNORE), "MPI_Testall (job agreement)");
  return flag != 0;
}

std::string encode(const std::pair<int, std::string>& verdict) { return std::to_string(verdict.first) + "\n" + verdict.second; }

std::pair<int, std::string> decode(const std::string& bytes) {
  const auto nl = bytes.find('\n');
  if (nl == std::string::npos) throw Error("job agreement: a malformed verdict from rank 0");
  return {std::atoi(bytes.substr(0, nl).c_str()), bytes.substr(nl + 1)};
}

}  // namespace

int worldRank() {
  int rank = 0;
  check(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "MPI_Comm_rank");
  return rank;
}

int worldSize() {
  int size = 1;
  check(MPI_Comm_size(MPI_COMM_WORLD, &size), "MPI_Comm_size");
  return size;
}

std::pair<int, std::string> agreeAtStart(const std::string& mine, const JobJudge& judge, std::chrono::milliseconds timeout) {
  const int rank = worldRank();
  const int size = worldSize();
  const Clock::time_point deadline = Clock::now() + timeout;
  const int bytes = messageBytes(mine.size());
  if (rank != 0) {
    std::vector<MPI_Request> sent(1);
    check(MPI_Isend(mine.data(), bytes, MPI_CHAR, 0, kProposalTag, MPI_COMM_WORLD, sent.data()), "MPI_Isend (job agreement)");
    std::string verdict;
    int from = 0;
    bool got = false;
    while (!(got = got || tryReceive(0, kVerdictTag, verdict, from)) || !allDone(sent)) {
      if (Clock::now() > deadline)
        throw TimeoutError("rank " + std::to_string(rank) + ": no verdict from rank 0 within " + seconds(timeout) +
                           " at the start-of-job agreement (rank 0 stopped or never started)");
      std::this_thread::sleep_for(kPollPause);
    }
    return decode(verdict);
  }

  std::vector<std::string> all(static_cast<std::size_t>(size));
  all[0] = mine;
  std::vector<bool> arrived(static_cast<std::size_t>(size), false);
  arrived[0] = true;
  for (int missing = size - 1; missing > 0;) {
    std::string proposal;
    int from = 0;
    if (tryReceive(MPI_ANY_SOURCE, kProposalTag, proposal, from)) {
      if (!arrived[static_cast<std::size_t>(from)]) --missing;
      arrived[static_cast<std::size_t>(from)] = true;
      all[static_cast<std::size_t>(from)] = std::move(proposal);
      continue;
    }
    if (Clock::now() > deadline) {
      std::vector<int> absent;
      for (int r = 0; r < size; ++r)
        if (!arrived[static_cast<std::size_t>(r)]) absent.push_back(r);
      throw TimeoutError("rank 0: " + std::string(absent.size() == 1 ? "rank " : "ranks ") + conventions::rankList(absent) +
                         " did not reach the start-of-job agreement within " + seconds(timeout) + " (stopped, or started another program)");
    }
    std::this_thread::sleep_for(kPollPause);
  }
  const std::pair<int, std::string> verdict = judge(all);
  const std::string payload = encode(verdict);
  std::vector<MPI_Request> sent(static_cast<std::size_t>(size - 1));
  for (int r = 1; r < size; ++r)
    check(MPI_Isend(payload.data(), messageBytes(payload.size()), MPI_CHAR, r, kVerdictTag, MPI_COMM_WORLD, &sent[static_cast<std::size_t>(r - 1)]),
          "MPI_Isend (job agreement verdict)");
  while (!allDone(sent)) {
    if (Clock::now() > deadline) throw TimeoutError("rank 0: the start-of-job verdict was not taken within " + seconds(timeout));
    std::this_thread::sleep_for(kPollPause);
  }
  return verdict;
}

void abortJob(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

}  // namespace cclab::mpi
