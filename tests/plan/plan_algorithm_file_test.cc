// Algorithms as files (algorithm_file.h): export -> import is the identity for every built-in
// algorithm x channels {1, 2, 4} x ranks 2..16; a file runs at any count (multiples of its chunks and
// not) as a valid plan; `file:PATH` resolves like a built-in name; what a plan cannot express is
// refused with its reason.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "collectives/core/errors.h"
#include "collectives/plan/algorithm_file.h"
#include "collectives/plan/validate.h"
#include "tests/plan/generator_cases.h"
#include "tests/plan/algorithms/public_algorithms.h"
#include "tests/support/temp_dir.h"

namespace cclab::plan {
namespace {

// Everything a consumer reads, algorithm aside (an imported plan carries the file's own value).
void expectSamePlan(const Plan& want, const Plan& got, const std::string& what) {
  Plan a = want, b = got;
  b.algorithm = a.algorithm;
  EXPECT_EQ(dump(a), dump(b)) << what;
  EXPECT_EQ(a.deps, b.deps) << what;
  EXPECT_EQ(a.nchannels, b.nchannels) << what;
}

PlanShape shapeFor(Algorithm a, int p, int channels) {
  // hier needs whole nodes: two ranks per node where p is even, else one node of all ranks.
  const int g = a == Algorithm::Hierarchical ? (p % 2 == 0 ? 2 : p) : (p % 2 == 0 && p > 2 ? 2 : 0);
  return {channels, g};
}

void expectRoundTrips(FileFormat f) {
  for (const auto& c : testing::kGeneratorCases)
    for (int channels : {1, 2, 4})
      for (int p = 2; p <= 16; ++p) {
        const std::int64_t count = 2 * p + 3;  // not a multiple of anything the plan cuts by
        const PlanShape shape = shapeFor(c.algorithm, p, channels);
        const Plan plan = makePlan(c.collective, c.algorithm, p, count, p / 2, shape);
        const std::string what = testing::caseName(c) + " p=" + std::to_string(p) + " channels=" + std::to_string(channels) + " " +
                                 std::string(name(f));
        const std::string text = exportAlgorithm(unitOf(plan, std::string(name(c.algorithm))), f);
        AlgorithmFile back;
        ASSERT_NO_THROW(back = importAlgorithm(text)) << what << "\n" << text.substr(0, 2000);
        expectSamePlan(plan, instantiate(back, c.algorithm, count), what);
      }
}

TEST(AlgorithmFile, MscclXmlExportImportIsTheIdentityForEveryBuiltInAlgorithm) { expectRoundTrips(FileFormat::MscclXml); }
TEST(AlgorithmFile, MscclppJsonExportImportIsTheIdentityForEveryBuiltInAlgorithm) { expectRoundTrips(FileFormat::MscclppJson); }

TEST(AlgorithmFile, AFileRunsAtEveryCountAsAValidPlan) {
  // The ring allreduce of 5 ranks written at 10 elements (unit: 10 chunks), run at other counts.
  const Plan plan = makePlan(Collective::AllReduce, Algorithm::Ring, 5, 10);
  const AlgorithmFile file = importAlgorithm(exportAlgorithm(unitOf(plan, "ring"), FileFormat::MscclXml));
  for (std::int64_t n : {0, 1, 7, 10, 23, 30, 97}) {
    const Plan run = instantiate(file, Algorithm::Ring, n);
    EXPECT_EQ(run.count, n);
    const auto problems = validate(run);
    EXPECT_TRUE(problems.empty()) << "n=" << n << ": " << (problems.empty() ? "" : problems.front());
  }
  // An allgather written over whole blocks (each range inside one block) runs a remainder as one more
  // (ring) channel.
  const Plan ag = makePlan(Collective::AllGather, Algorithm::Ring, 3, 6, 0, {2});
  const AlgorithmFile agFile = importAlgorithm(exportAlgorithm(unitOf(ag, "ag"), FileFormat::MscclXml));
  ASSERT_EQ(agFile.unit.count, 2);
  for (std::int64_t n : {4, 5, 13}) {
    const Plan run = instantiate(agFile, Algorithm::Ring, n);
    EXPECT_EQ(run.nchannels, n % 2 == 0 ? 2 : 3) << n;
    EXPECT_TRUE(validate(run).empty()) << "n=" << n;
  }
}

TEST(AlgorithmFile, RangesAcrossBlocksRunMultiplesOnly) {
  // Rank 0 gathers both blocks and relays them to rank 1 as three ranges, one across the two blocks.
  Plan relay;
  relay.collective = Collective::AllGather;
  relay.nranks = 2;
  relay.count = 2;
  relay.nphases = 2;
  relay.ranks = {{{OpKind::Copy, -1, 0, {Buf::Input, 0, 2}, {Buf::Output, 0, 2}},
                  {OpKind::Recv, 1, 0, {}, {Buf::Output, 2, 2}},
                  {OpKind::Send, 1, 1, {Buf::Output, 0, 1}, {}},
                  {OpKind::Send, 1, 1, {Buf::Output, 1, 2}, {}},
                  {OpKind::Send, 1, 1, {Buf::Output, 3, 1}, {}}},
                 {{OpKind::Send, 0, 0, {Buf::Input, 0, 2}, {}},
                  {OpKind::Recv, 0, 1, {}, {Buf::Output, 0, 1}},
                  {OpKind::Recv, 0, 1, {}, {Buf::Output, 1, 2}},
                  {OpKind::Recv, 0, 1, {}, {Buf::Output, 3, 1}}}};
  ASSERT_TRUE(validate(relay).empty()) << validate(relay).front();
  const AlgorithmFile f = importAlgorithm(exportAlgorithm(unitOf(relay, "relay"), FileFormat::MscclXml));
  EXPECT_TRUE(validate(instantiate(f, Algorithm::Ring, 10)).empty());
  try {
    instantiate(f, Algorithm::Ring, 11);
    ADD_FAILURE() << "an odd count of a file whose ranges cross blocks ran";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("multiples of 2"), std::string::npos) << e.what();
  }
}

std::string writeTemp(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / ("cclab_algofile_" + std::to_string(::getpid()) + "_" + name);
  std::ofstream(path) << text;
  return path.string();
}

TEST(AlgorithmFile, FileNamesResolveLikeBuiltInAlgorithms) {
  const Plan plan = makePlan(Collective::AllReduce, Algorithm::HalvingDoubling, 6, 12);
  const std::string path = writeTemp("rhd6.xml", exportMscclXml(unitOf(plan, "rhd")));
  const Algorithm a = parseAlgorithm("file:" + path);
  EXPECT_TRUE(isFileAlgorithm(a));
  EXPECT_EQ(parseAlgorithm("file:" + path), a);  // loaded once
  EXPECT_EQ(name(a), "file:" + path);
  EXPECT_TRUE(hasGenerator(Collective::AllReduce, a));
  EXPECT_FALSE(hasGenerator(Collective::AllGather, a));
  for (int channels : {1, 3})
    for (std::int64_t n : {12, 1001}) {
      const Plan run = makePlan(Collective::AllReduce, a, 6, n, 0, {channels});
      EXPECT_EQ(run.algorithm, a);
      EXPECT_TRUE(validate(run).empty()) << "channels=" << channels << " n=" << n;
    }
  EXPECT_THROW(makePlan(Collective::AllReduce, a, 4, 12), InvalidArgument);  // written for 6 ranks
  EXPECT_THROW(parseAlgorithm("file:/nonexistent/algo.xml"), InvalidArgument);
  std::filesystem::remove(path);
}

std::string refusal(const std::string& text) {
  try {
    importAlgorithm(text);
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "accepted";
}

// A two-rank allreduce in MSCCL's XML with one step of rank 0 replaced by `step0`.
std::string twoRankFile(const std::string& step0) {
  return R"(<algo name="t" coll="allreduce" ngpus="2" nchunksperloop="2" nchannels="1" proto="Simple" inplace="1" outofplace="1">
  <gpu id="0" i_chunks="2" o_chunks="2" s_chunks="2">
    <tb id="0" send="1" recv="1" chan="0">
      )" + step0 + R"(
    </tb>
  </gpu>
  <gpu id="1" i_chunks="2" o_chunks="2" s_chunks="0">
    <tb id="0" send="0" recv="0" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="o" dstoff="0" cnt="2" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
</algo>)";
}

// A 3-rank ring allreduce as MSCCLang fuses it: one threadblock per rank (send to the next, receive
// from the previous), s, rrcs, rrcs, rcs, r; its receive-then-send steps must not wait on themselves.
TEST(AlgorithmFile, FusedRingStepsImport) {
  std::string xml = R"(<algo name="ring3" coll="allreduce" ngpus="3" nchunksperloop="3" nchannels="1" proto="Simple" inplace="0" outofplace="1">)";
  for (int r = 0; r < 3; ++r) {
    const int prev = (r + 2) % 3, next = (r + 1) % 3;
    auto step = [&](int s, const char* type, const char* sb, int so, const char* db, int d) {
      return "<step s=\"" + std::to_string(s) + "\" type=\"" + type + "\" srcbuf=\"" + sb + "\" srcoff=\"" + std::to_string(so) +
             "\" dstbuf=\"" + db + "\" dstoff=\"" + std::to_string(d) + "\" cnt=\"1\" depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>";
    };
    xml += "<gpu id=\"" + std::to_string(r) + "\" i_chunks=\"3\" o_chunks=\"3\" s_chunks=\"0\"><tb id=\"0\" send=\"" +
           std::to_string(next) + "\" recv=\"" + std::to_string(prev) + "\" chan=\"0\">";
    xml += step(0, "s", "i", r, "o", r);
    xml += step(1, "rrcs", "i", prev, "o", prev);
    xml += step(2, "rrcs", "i", next, "o", next);  // the chunk's last contribution: complete, sent on
    xml += step(3, "rcs", "o", r, "o", r);
    xml += step(4, "r", "o", prev, "o", prev);
    xml += "</tb></gpu>";
  }
  xml += "</algo>";
  AlgorithmFile f;
  ASSERT_NO_THROW(f = importAlgorithm(xml));
  EXPECT_EQ(f.unit.ranks[0].size(), 8U);  // s, rrc+s, rrc+s, r+s, r
  EXPECT_TRUE(validate(instantiate(f, Algorithm::Ring, 3001)).empty());
}

TEST(AlgorithmFile, WhatAPlanCannotExpressIsRefusedWithItsReason) {
  EXPECT_NE(refusal("<algo").find("not well-formed XML"), std::string::npos);
  EXPECT_NE(refusal("<foo/>").find("no <algo>"), std::string::npos);
  EXPECT_NE(refusal("hello").find("MSCCL XML"), std::string::npos);
  EXPECT_NE(refusal(twoRankFile(R"(<step s="0" type="rrs" srcbuf="i" srcoff="0" dstbuf="o" dstoff="0" cnt="2" depid="-1" deps="-1" hasdep="0"/>)"))
                .find("rrs"),
            std::string::npos);
  EXPECT_NE(refusal(twoRankFile(R"(<step s="0" type="xyz" srcbuf="i" srcoff="0" dstbuf="o" dstoff="0" cnt="2" depid="-1" deps="-1" hasdep="0"/>)"))
                .find("unknown step type"),
            std::string::npos);
  EXPECT_NE(refusal(twoRankFile(R"(<step s="0" type="r" srcbuf="i" srcoff="0" dstbuf="o" dstoff="1" cnt="2" depid="-1" deps="-1" hasdep="0"/>)"))
                .find("outside its buffer"),
            std::string::npos);
  EXPECT_NE(refusal(twoRankFile(R"(<step s="0" type="r" srcbuf="i" srcoff="0" dstbuf="o" dstoff="0" cnt="x2" depid="-1" deps="-1" hasdep="0"/>)"))
                .find("must be an integer"),
            std::string::npos);
  // Receiving without reducing leaves rank 0 without rank 0's own data: the validator says so.
  EXPECT_NE(refusal(twoRankFile(R"(<step s="0" type="r" srcbuf="i" srcoff="0" dstbuf="o" dstoff="0" cnt="2" depid="-1" deps="-1" hasdep="0"/>)"))
                .find("does not validate"),
            std::string::npos);
  // Waiting on its own later step never runs.
  EXPECT_NE(refusal(twoRankFile(R"(<step s="0" type="rrc" srcbuf="i" srcoff="0" dstbuf="o" dstoff="0" cnt="2" depid="0" deps="0" hasdep="0"/>)"))
                .find("cannot all run"),
            std::string::npos);
}

// Issue 32 rows 17 and 18: an MSCCL++ plan with a key twice (the last was taken), an XML file of two
// <algo> documents (the second ignored), a plan with no collective (the message named the misspelling
// "colletive" that MSCCL++'s own plans use), and a buffer_id past its threadblock's refs (named as
// "remote buffer -1").
TEST(AlgorithmFile, DuplicatesSecondDocumentsAndBadIdsAreRefusedNamingWhatIsWrong) {
  const Plan plan = makePlan(Collective::AllReduce, Algorithm::Ring, 2, 4);
  const std::string json = exportMscclppJson(unitOf(plan, "ring"));
  const auto at = json.find("\"collective\"");
  ASSERT_NE(at, std::string::npos);
  std::string twice = json;
  twice.insert(at, "\"collective\": \"allgather\", ");
  EXPECT_NE(refusal(twice).find("the key \"collective\" appears twice"), std::string::npos) << refusal(twice);
  std::string none = json;
  none.replace(at, 12, "\"kind\"");
  EXPECT_NE(refusal(none).find("missing \"collective\""), std::string::npos) << refusal(none);
  std::string misspelt = json;
  misspelt.replace(at, 12, "\"colletive\"");
  EXPECT_EQ(refusal(misspelt), "accepted") << "MSCCL++'s own spelling reads";
  const auto id = json.find("\"buffer_id\": 0");
  ASSERT_NE(id, std::string::npos) << json;
  std::string badId = json;
  badId.replace(id, 14, "\"buffer_id\": 9");
  const std::string why = refusal(badId);
  EXPECT_NE(why.find("buffer_id 9 is not an index of its threadblock's"), std::string::npos) << why;
  EXPECT_EQ(why.find("-1"), std::string::npos) << why;

  const std::string xml = exportMscclXml(unitOf(plan, "ring"));
  EXPECT_NE(refusal(xml + xml).find("more than one top-level element"), std::string::npos) << refusal(xml + xml);
}

}  // namespace
}  // namespace cclab::plan

namespace cclab::plan {
namespace {

// The public algorithms of tests/plan/algorithms (each file names the example it reproduces): they
// import, validate, and run as valid plans at random non-power-of-two counts, on 1 and 2 channels.
TEST(AlgorithmFile, PublicExamplesImportValidateAndRunAtAnyCount) {
  std::mt19937_64 rng(20261204);
  for (const auto& e : cclab::testing::kPublicAlgorithms) {
    const std::string path = cclab::testing::publicAlgorithmPath(e.file);
    AlgorithmFile f;
    ASSERT_NO_THROW(f = importAlgorithm(cclab::testing::slurp(path))) << e.file;
    EXPECT_EQ(f.unit.collective, e.collective) << e.file;
    EXPECT_EQ(f.unit.nranks, e.nranks) << e.file;
    const Algorithm a = loadAlgorithmFile(path);
    for (int i = 0; i < 3; ++i) {
      const std::int64_t n = 1 + static_cast<std::int64_t>(rng() % 3000) * 2;  // odd: never a power of two above 1
      for (int channels : {1, 2}) {
        const Plan plan = makePlan(e.collective, a, e.nranks, n, 0, {channels});
        const auto problems = validate(plan, {.sliceElems = {0, 7}});
        EXPECT_TRUE(problems.empty()) << e.file << " n=" << n << ": " << (problems.empty() ? "" : problems.front());
      }
    }
  }
}

}  // namespace
}  // namespace cclab::plan
