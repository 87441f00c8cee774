// The start-of-job judgement (collectives/conventions/job_agreement.h): usage errors, --help on some
// ranks, the first differing field with its ranks, memory summed per host, and the wire format.
#include "collectives/conventions/job_agreement.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "collectives/core/errors.h"

namespace cclab::conventions {
namespace {

JobProposal run(std::string b, std::string e = "8") {
  JobProposal p;
  p.add("-b", std::move(b));
  p.add("-e", std::move(e));
  p.host = std::string("h");
  return p;
}

TEST(JobAgreement, EqualRanksRun) {
  const std::vector<JobProposal> ranks{run("8"), run("8"), run("8")};
  EXPECT_EQ(judge(ranks).action, JobAction::Run);
  EXPECT_EQ(judge(ranks).exitCode(), 0);
}

TEST(JobAgreement, TheFirstDifferingFieldIsNamedWithItsRanks) {
  const std::vector<JobProposal> ranks{run("8", "9"), run("16", "10"), run("8", "9"), run("8", "9")};
  const JobVerdict v = judge(ranks);
  EXPECT_EQ(v.action, JobAction::Refuse);
  EXPECT_EQ(v.exitCode(), 2);
  EXPECT_EQ(v.message, "ranks disagree on -b: ranks 0,2-3 have '8', rank 1 has '16' (every rank must be started with the same configuration)");
  std::vector<JobProposal> absent{run("8"), run("8")};
  absent[1].add("--extra", "1");
  EXPECT_EQ(judge(absent).message.rfind("ranks disagree on --extra: rank 0 has '(absent)', rank 1 has '1'", 0), 0U) << judge(absent).message;
}

TEST(JobAgreement, AUsageErrorOnAnyRankRefusesNamingIt) {
  std::vector<JobProposal> ranks{run("8"), run("8"), run("8")};
  ranks[2].status = JobStatus::Usage;
  ranks[2].message = "-b/-e: minbytes 8 > maxbytes 4";
  EXPECT_EQ(judge(ranks).message, "rank 2: -b/-e: minbytes 8 > maxbytes 4");
  ranks[0].status = JobStatus::Usage;
  ranks[0].message = "bad";
  EXPECT_EQ(judge(ranks).message, "bad");
}

TEST(JobAgreement, HelpOnSomeRanksIsADisagreementOnEveryRankHelp) {
  std::vector<JobProposal> ranks{run("8"), run("8")};
  ranks[1].status = JobStatus::Help;
  ranks[1].message = "--help";
  EXPECT_EQ(judge(ranks).message.rfind("ranks disagree on --help: rank 0 has 'runs', rank 1 has 'asked for --help'", 0), 0U);
  ranks[0] = ranks[1];
  EXPECT_EQ(judge(ranks).action, JobAction::Help);
  EXPECT_EQ(judge(ranks).exitCode(), 0);
}

TEST(JobAgreement, MemoryIsSummedOverTheRanksOfEachHost) {
  constexpr std::int64_t kGiB = 1LL << 30;
  std::vector<JobProposal> ranks{run("8"), run("8"), run("8")};
  for (JobProposal& p : ranks) {
    p.hostBytes = 20 * kGiB;  // each fits 23 GiB alone
    p.hostAvailable = 23 * kGiB;
    p.memoryWhat = "-e 4294967296 on -g 1";
  }
  ranks[2].host = "other";
  const JobVerdict v = judge(ranks);
  EXPECT_EQ(v.action, JobAction::Refuse);
  EXPECT_EQ(v.message, "-e 4294967296 on -g 1 needs 42949672960 bytes (40.0 GiB) of host memory on h for its ranks 0-1 (20.0 GiB each "
                       "on average), only 24696061952 bytes (23.0 GiB) are available (MemAvailable)");
  ranks[1].host = "third";  // one rank per host: each fits
  EXPECT_EQ(judge(ranks).action, JobAction::Run);
  ranks[1].host = "h";
  ranks[1].hostAvailable = -1;  // unknown on one rank: the other's reading counts
  EXPECT_EQ(judge(ranks).action, JobAction::Refuse);
  for (JobProposal& p : ranks) p.hostAvailable = -1;  // unknown everywhere: nothing refused
  EXPECT_EQ(judge(ranks).action, JobAction::Run);
}

TEST(JobAgreement, ProposalsRoundTripAndMalformedOnesAreRefused) {
  JobProposal p = run("8", std::string("a:b\n\0c", 7));
  p.status = JobStatus::Usage;
  p.message = "12:34";
  p.hostBytes = 123;
  p.hostAvailable = -1;
  p.memoryWhat = "-e 8";
  const JobProposal q = parseProposal(serialize(p));
  EXPECT_EQ(q.status, p.status);
  EXPECT_EQ(q.message, p.message);
  EXPECT_EQ(q.fields, p.fields);
  EXPECT_EQ(q.host, p.host);
  EXPECT_EQ(q.hostBytes, 123);
  EXPECT_EQ(q.hostAvailable, -1);
  EXPECT_EQ(q.memoryWhat, p.memoryWhat);
  const std::string text = serialize(p);
  for (std::size_t cut : {std::size_t{0}, std::size_t{1}, text.size() / 2, text.size() - 1})
    EXPECT_THROW((void)parseProposal(text.substr(0, cut)), InvalidArgument) << cut;
  EXPECT_THROW((void)parseProposal(text + "x"), InvalidArgument);
  EXPECT_EQ(rankList(std::vector<int>{0, 1, 2, 5, 7, 8}), "0-2,5,7-8");
}

}  // namespace
}  // namespace cclab::conventions
