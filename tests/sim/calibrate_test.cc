#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "sim/calibrate.h"
#include "sim/measured.h"
#include "sim/presets.h"
#include "tests/sim/uniform_topology.h"

using namespace cclab;
using namespace cclab::sim;

namespace {

// Synthetic measurements: the replay's own predictions for a known topology.
Measurement synthetic(const TopologySpec& truth, plan::Algorithm a, int p, std::vector<Bytes> sizes,
                      plan::Collective c = plan::Collective::AllReduce) {
  Measurement m;
  m.source = "synthetic";
  m.collective = c;
  m.algorithm = a;
  m.nranks = p;
  for (Bytes s : sizes) {
    MeasuredPoint pt{s, s / 4, 0};
    pt.time = predictPoint(truth, m, pt, 0);
    m.points.push_back(pt);
  }
  return m;
}

std::vector<Bytes> sweep(Bytes from, Bytes to) {
  std::vector<Bytes> out;
  for (Bytes s = from; s <= to; s *= 4) out.push_back(s);
  return out;
}

}  // namespace

TEST(Calibrate, RecoversAlphaBetaGammaOnASwitch) {
  TopologySpec truth;
  truth.name = "truth";
  truth.kind = TopologyKind::Switch;
  truth.ranks = 8;
  truth.classes["link"] = {2.0, 20.0};
  truth.compute.reduceBandwidth = 12.0;
  std::vector<Measurement> fit = {synthetic(truth, plan::Algorithm::Ring, 4, sweep(1024, 64 << 20)),
                                  synthetic(truth, plan::Algorithm::Ring, 8, sweep(1024, 64 << 20)),
                                  synthetic(truth, plan::Algorithm::FlatTree, 8, sweep(1024, 16 << 20)),
                                  // An allgather reduces nothing: it tells β from γ (with links shared
                                  // fairly, the allreduces' times depend on β and γ almost only through
                                  // one combination of them).
                                  synthetic(truth, plan::Algorithm::Ring, 8, sweep(1024, 64 << 20), plan::Collective::AllGather)};
  TopologySpec start = truth;
  start.classes["link"] = {0.5, 60.0};
  start.compute.reduceBandwidth = 40.0;
  const auto r = calibrate(start, fit, {});
  EXPECT_NEAR(r.fitted.at("classes.link.latency_us"), 2.0, 0.01 * 2.0);
  EXPECT_NEAR(r.fitted.at("classes.link.bandwidth_gbps"), 20.0, 0.01 * 20.0);
  EXPECT_NEAR(r.fitted.at("compute.reduce_gbps"), 12.0, 0.01 * 12.0);
  EXPECT_LT(summarize(r.fit).max, 0.01);
}

TEST(Calibrate, RecoversHostParametersAndChecksHeldOutRanks) {
  TopologySpec truth = *findPreset("host");
  truth.classes["thread"] = {3.0, 18.0};
  truth.classes["memory"] = {0.0, 40.0};
  truth.compute.reduceBandwidth = 6.0;
  std::vector<Measurement> fit = {synthetic(truth, plan::Algorithm::Ring, 2, sweep(256, 16 << 20)),
                                  synthetic(truth, plan::Algorithm::Ring, 4, sweep(256, 16 << 20)),
                                  synthetic(truth, plan::Algorithm::Ring, 4, sweep(256, 16 << 20), plan::Collective::AllGather)};
  std::vector<Measurement> check = {synthetic(truth, plan::Algorithm::Ring, 3, sweep(1024, 4 << 20))};
  CalibrationOptions o;
  o.params = {"classes.thread.latency_us", "classes.memory.bandwidth_gbps", "compute.reduce_gbps"};
  TopologySpec start = truth;
  start.classes["thread"].latency = 1.0;
  start.classes["memory"].bandwidth = 80.0;
  start.compute.reduceBandwidth = 3.0;
  const auto r = calibrate(start, fit, check, o);
  EXPECT_NEAR(r.fitted.at("classes.thread.latency_us"), 3.0, 0.03);
  EXPECT_NEAR(r.fitted.at("classes.memory.bandwidth_gbps"), 40.0, 0.4);
  EXPECT_NEAR(r.fitted.at("compute.reduce_gbps"), 6.0, 0.06);
  EXPECT_LT(summarize(r.check).max, 0.01);
}

TEST(Calibrate, ParamNames) {
  TopologySpec s = *findPreset("dgx-h100");
  EXPECT_DOUBLE_EQ(getParam(s, "classes.link.bandwidth_gbps"), 450);
  setParam(s, "compute.copy_gbps", 7);
  EXPECT_DOUBLE_EQ(s.compute.copyBandwidth, 7);
  EXPECT_THROW(getParam(s, "classes.nvlink.latency_us"), TopologyError);
  EXPECT_THROW(getParam(s, "links.x"), TopologyError);
  EXPECT_THROW(getParam(s, "classes.link.speed"), TopologyError);
}

TEST(Measured, TolerantReader) {
  const auto j = nlohmann::json::parse(R"({"collective":"allreduce","backend":"host","algo":"tree","nranks":4,
    "type":"double","op":"sum","machine":"x","extra":{"ignored":true},
    "results":[{"size":1024,"count":128,"type":"double","redop":"sum","root":-1,
                "oop":{"time_us":12.5,"algbw":0.1,"busbw":0.1,"wrong":0},"ip":{"time_us":11.0}},
               {"size":2048,"ip":{"time":20.0}},
               {"size":4096,"time_us":30.0},
               {"size":0,"oop":{"time_us":1.0}}]})");
  const Measurement m = parseMeasurement(j, "j");
  EXPECT_EQ(m.algorithm, plan::Algorithm::Tree);
  EXPECT_EQ(m.elemSize, 8);
  ASSERT_EQ(m.points.size(), 3U);  // the zero-size row is skipped
  EXPECT_DOUBLE_EQ(m.points[0].time, 12.5);
  EXPECT_EQ(m.points[0].count, 128);
  EXPECT_DOUBLE_EQ(m.points[1].time, 20.0);
  EXPECT_DOUBLE_EQ(m.points[2].time, 30.0);
  // allgather: the size column is the total, the API count per rank.
  const auto ag = parseMeasurement(nlohmann::json::parse(
      R"({"collective":"allgather","nranks":4,"results":[{"size":4096,"oop":{"time_us":1}}]})"), "ag");
  EXPECT_EQ(ag.points[0].count, 256);
}

namespace {

// parseMeasurement's error for a JSON text, "" when it parses.
std::string errorOf(const char* text) {
  try {
    parseMeasurement(nlohmann::json::parse(text), "f");
  } catch (const MeasuredError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Measured, BadFilesNameTheField) {
  EXPECT_NE(errorOf(R"({"results":[]})").find("'nranks'"), std::string::npos);
  EXPECT_NE(errorOf(R"({"nranks":2,"algo":"spiral","results":[]})").find("'algo'"), std::string::npos);
  EXPECT_NE(errorOf(R"({"nranks":2})").find("'results'"), std::string::npos);
  EXPECT_NE(errorOf(R"({"nranks":2,"results":[{"size":8}]})").find("'results[0].oop.time_us'"), std::string::npos);
  EXPECT_NE(errorOf(R"({"nranks":2,"results":[{"size":"big","time_us":1}]})").find("'results[0].size'"), std::string::npos);
}

// Found by fuzz/measured_fuzz: nranks and size were cast from double unchecked (1e300 is undefined
// behaviour, 2.5 ranks became 2), and a number beyond double (1e999) escaped as a JSON library exception.
TEST(Measured, FuzzFoundCastsAreChecked) {
  EXPECT_NE(errorOf(R"({"nranks":2.5,"results":[]})").find("'nranks'"), std::string::npos);
  EXPECT_NE(errorOf(R"({"nranks":1e300,"results":[]})").find("'nranks'"), std::string::npos);
  EXPECT_NE(errorOf(R"({"nranks":2,"results":[{"size":1e30,"time_us":1}]})").find("'results[0].size'"), std::string::npos);
  EXPECT_EQ(errorOf(R"({"nranks":2,"results":[{"size":8,"time_us":1}]})"), "");
  const auto path = std::filesystem::temp_directory_path() / "cclab_sim_fuzz_measured.json";
  std::ofstream(path) << R"({"nranks":2,"results":[{"size":8,"time_us":1e999}]})";
  EXPECT_THROW(loadMeasurement(path.string()), MeasuredError) << "a number beyond double";
  std::filesystem::remove(path);
}

TEST(Calibrate, RecoversKnownAlphaAndBetaFromMeasurementsMadeWithThem) {
  // Only α and β are free; the measurements are replays with α = 4.5 µs and 37 GB/s on a fully
  // connected topology of 5 ranks, at awkward sizes; the fit starts a factor of 6 away from both.
  const TopologySpec truth = cclab::sim::testing::uniformTopology(TopologyKind::FullyConnected, 5, 4.5, 37.0);
  std::vector<Measurement> fit = {synthetic(truth, plan::Algorithm::Ring, 5, {1000, 77777, 1234560, 9999992, 31000000}),
                                  synthetic(truth, plan::Algorithm::FlatTree, 5, {4004, 640000, 7000004})};
  TopologySpec start = truth;
  start.classes["link"] = {0.75, 222.0};
  CalibrationOptions o;
  o.params = {"classes.link.latency_us", "classes.link.bandwidth_gbps"};
  o.sliceBytes = 0;  // auto slicing, as synthetic() measured
  const auto r = calibrate(start, fit, {}, o);
  EXPECT_NEAR(r.fitted.at("classes.link.latency_us"), 4.5, 1e-4 * 4.5);
  EXPECT_NEAR(r.fitted.at("classes.link.bandwidth_gbps"), 37.0, 1e-4 * 37.0);
  EXPECT_TRUE(r.unidentified.empty());
}

TEST(Calibrate, SplitsFittedFromHeldOutPoints) {
  auto file = [](const char* name, std::vector<Bytes> sizes) {
    Measurement m;
    m.source = name;
    m.nranks = 2;
    for (Bytes s : sizes) m.points.push_back({s, s / 4, 1.0 + static_cast<double>(s)});
    return m;
  };
  const auto sets = splitForCalibration({file("a", {4, 64, 1024, 4096}), file("b", {64, 128})}, {file("c", {8, 2048})},
                                        {1024, 128}, 64);
  auto sizesOf = [](const Measurement& m) {
    std::vector<Bytes> s;
    for (const auto& pt : m.points) s.push_back(pt.size);
    return s;
  };
  ASSERT_EQ(sets.fit.size(), 2u);
  EXPECT_EQ(sizesOf(sets.fit[0]), (std::vector<Bytes>{64, 4096}));
  EXPECT_EQ(sizesOf(sets.fit[1]), (std::vector<Bytes>{64}));
  ASSERT_EQ(sets.check.size(), 3u);
  EXPECT_EQ(sets.check[0].source, "a");
  EXPECT_EQ(sizesOf(sets.check[0]), (std::vector<Bytes>{1024}));
  EXPECT_EQ(sizesOf(sets.check[1]), (std::vector<Bytes>{128}));
  EXPECT_EQ(sets.check[2].source, "c");
  EXPECT_EQ(sizesOf(sets.check[2]), (std::vector<Bytes>{2048}));
}

// Issue 32 #21: with fewer distinct points than parameters a fit passes through every point whatever
// its parameters (on main: 2 parameters fitted to 1 point, 0% error). Refused before any replay, naming
// both counts; the same size measured in two files counts once.
TEST(Calibrate, RefusesFitsWithFewerDistinctPointsThanParameters) {
  const TopologySpec host = *findPreset("host");
  CalibrationOptions o;
  o.params = {"classes.thread.latency_us", "classes.thread.bandwidth_gbps"};
  const Measurement one = synthetic(host, plan::Algorithm::Ring, 4, {65536});
  try {
    (void)calibrate(host, {one}, {}, o);
    ADD_FAILURE() << "a fit of 2 parameters to 1 point was taken";
  } catch (const MeasuredError& e) {
    EXPECT_NE(std::string(e.what()).find("2 parameters cannot be fitted to 1 distinct measured point(s)"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)calibrate(host, {one, one}, {}, o), MeasuredError);  // the same point twice is one point
  const Measurement two = synthetic(host, plan::Algorithm::Ring, 4, {1024, 65536});
  EXPECT_NO_THROW((void)calibrate(host, {two}, {}, o));
}
