#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "collectives/core/errors.h"
#include "nlohmann/json.hpp"
#include "trainer/cli/options.h"
#include "trainer/report/baseline.h"
#include "trainer/report/json_report.h"
#include "trainer/run/train_config.h"

namespace cclab::trainer {
namespace {

namespace fs = std::filesystem;

std::optional<CliOptions> parse(std::vector<std::string> args) {
  args.insert(args.begin(), "cclab-train");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  std::ostringstream help;
  return parseCommandLine(static_cast<int>(argv.size()), argv.data(), help);
}

TEST(Options, ParsesTheDocumentedCommandLine) {
  const auto o = parse({"--data", "fashion-mnist", "--mode", "async", "--workers", "4", "--epochs", "10", "--batch", "256",
                        "--lr", "0.05", "--dc-lambda", "0.04", "--ssp", "4", "--straggler", "1:compute=1.4", "-J", "run.json"});
  ASSERT_TRUE(o);
  EXPECT_EQ(o->train.mode, Mode::Async);
  EXPECT_EQ(o->train.workers, 4);
  EXPECT_FLOAT_EQ(o->train.async.dcLambda, 0.04F);
  EXPECT_EQ(o->train.async.sspBound, 4);
  EXPECT_EQ(o->train.straggler.rank, 1);
  EXPECT_DOUBLE_EQ(o->train.straggler.computeFactor, 1.4);
  EXPECT_EQ(o->output.jsonPath, "run.json");
  const auto s = parse({"--mode", "sync", "--workers", "4", "--algo", "ring", "--backend", "host", "--bucket", "64K",
                        "--first-bucket", "8K", "--no-overlap"});
  ASSERT_TRUE(s);
  EXPECT_EQ(s->train.sync.algorithm, plan::Algorithm::Ring);
  EXPECT_EQ(s->train.sync.bucketBytes, 64U * 1024);
  EXPECT_EQ(s->train.sync.firstBucketBytes, 8U * 1024);
  EXPECT_FALSE(s->train.sync.overlap);
  EXPECT_EQ(s->train.shard.mode, ShardMode::ShuffleEachEpoch);  // the default
  const auto k = parse({"--workers", "4", "--shard", "label-skew:0.5"});
  ASSERT_TRUE(k);
  EXPECT_EQ(k->train.shard.mode, ShardMode::LabelSkew);
  EXPECT_DOUBLE_EQ(k->train.shard.alpha, 0.5);
}

TEST(Options, TheOldStragglerSpellingMeansAComputeFactor) {
  const auto o = parse({"--workers", "4", "--straggler", "2:1.4"});
  ASSERT_TRUE(o);
  EXPECT_EQ(o->train.straggler.rank, 2);
  EXPECT_DOUBLE_EQ(o->train.straggler.computeFactor, 1.4);
  EXPECT_EQ(o->train.straggler.startDelay.count(), 0);
  EXPECT_DOUBLE_EQ(o->train.straggler.linkFactor, 1.0);
  EXPECT_EQ(format(o->train.straggler), "2:compute=1.4");
}

TEST(Options, RejectsBadFlagsWithInvalidArgument) {
  const std::vector<std::vector<std::string>> bad = {
      {"--bogus"},
      {"--mode", "sideways"},
      {"--workers", "0"},
      {"--workers", "four"},
      {"--batch", "100", "--workers", "3"},
      {"--straggler", "1"},
      {"--straggler", "x:1.4"},
      {"--straggler", "1:0.5"},
      {"--straggler", "7:1.4", "--workers", "4"},
      {"--straggler", "1:delay=1ms"},  // the trainer injects compute only
      {"--straggler", "1:link=2"},
      {"--straggler", "1:compute=inf"},
      {"--algo", "butterfly"},
      {"--backend", "tpu"},
      {"--bucket", "25Q"},
      {"--widths", "784-abc-10"},
      {"--layers", "784,,10"},
      {"--layers", "784"},
      {"--layers", "784,10", "--widths", "784-10"},  // one name for one thing
      {"--model", "gpt5"},
      {"--compute-model", "b300"},
      {"--compute-model", "0"},
      {"--compute-model", "nan"},
      {"--compute-model", "-5"},
      {"--mode", "async", "--compute-model", "h100", "--ssp", "2"},  // SSP waits on real progress
      {"--mode", "async", "--model", "resnet50"},
      {"--data", "imagenet"},
      {"--remainder", "keep"},
      {"--mode", "async", "--ssp", "-3"},
      {"--mode", "async", "--dc-lambda", "-1"},
      {"--mode", "async", "--dc-lambda", "nan"},
      {"--mode", "async", "--dc-lambda", "inf"},
      {"--epochs", "0"},
      {"--lr", "inf"},
      {"--lr", "nan"},
      {"--lr", "-0.1"},
      {"--lr", "0"},
      {"--momentum", "nan"},
      {"--momentum", "1"},
      {"--weight-decay", "inf"},
      {"--weight-decay", "-1"},
  };
  for (const auto& args : bad) EXPECT_THROW(parse(args), InvalidArgument) << args[0] << " " << (args.size() > 1 ? args[1] : "");
}

TEST(Options, RefusesOptionsThatDoNothingInTheMode) {
  const std::vector<std::vector<std::string>> ignored = {
      {"--dc-lambda", "0.1"},
      {"--mode", "sync", "--ssp", "4"},
      {"--mode", "async", "--bucket", "1M"},
      {"--mode", "async", "--first-bucket", "8K"},
      {"--mode", "async", "--no-overlap"},
      {"--mode", "async", "--algo", "ring"},
      {"--mode", "async", "--backend", "host"},
  };
  for (const auto& args : ignored) {
    try {
      (void)parse(args);
      ADD_FAILURE() << args[args.size() - 2] << " accepted";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("has no effect"), std::string::npos) << e.what();
    }
  }
}

TEST(Options, ChecksOutputsBeforeTheRun) {
  const fs::path dir = fs::temp_directory_path() / ("cclab_train_out_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto outputs = [](std::string json, std::string trace) {
    OutputOptions o;
    o.jsonPath = std::move(json);
    o.tracePath = std::move(trace);
    return o;
  };
  EXPECT_THROW(checkOutputs(outputs(dir.string(), "")), InvalidArgument);                      // a directory
  EXPECT_THROW(checkOutputs(outputs("", (dir / "no" / "t.json").string())), InvalidArgument);  // no such folder
  EXPECT_THROW(checkOutputs(outputs((dir / "a.json").string(), (dir / "a.json").string())), InvalidArgument);
  EXPECT_NO_THROW(checkOutputs(outputs((dir / "a.json").string(), (dir / "t.json").string())));
  EXPECT_FALSE(fs::exists(dir / "a.json"));  // checking creates nothing
  fs::remove_all(dir);
}

TEST(Options, SizesAreTheSharedConventions) {  // the parser itself is tested in tests/conventions
  const auto s = parse({"--mode", "sync", "--bucket", "25MiB", "--first-bucket", "1g"});
  ASSERT_TRUE(s);
  EXPECT_EQ(s->train.sync.bucketBytes, std::size_t{25} << 20);
  EXPECT_EQ(s->train.sync.firstBucketBytes, std::size_t{1} << 30);
  for (const char* bad : {"M", "12XB", "-4K", "nan"}) {
    try {
      (void)parse({"--mode", "sync", "--first-bucket", bad});
      ADD_FAILURE() << bad << " accepted";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("--first-bucket"), std::string::npos) << e.what();
    }
  }
}

struct Exit {
  int code = -1;
  std::string err;
};

Exit runBinary(const std::string& args) {
  const fs::path err = fs::temp_directory_path() / ("cclab_train_err_" + std::to_string(::getpid()));
  const std::string cmd = std::string(CCLAB_TRAIN_BINARY) + " " + args + " >/dev/null 2>" + err.string();
  const int status = std::system(cmd.c_str());
  std::ifstream in(err);
  Exit e{WIFEXITED(status) ? WEXITSTATUS(status) : -1, {std::istreambuf_iterator<char>(in), {}}};
  fs::remove(err);
  return e;
}

int lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

TEST(Binary, BadUsageIsOneLineAndExitTwo) {
  for (const char* args : {"--bogus", "--workers 3 --batch 100", "--straggler 1:nope", "--data fashion-mnist --data-dir /no/such/dir",
                           "--mode async --backend cuda", "--data synthetic --widths 784-10-3",
                           "--data synthetic --layers 784,10,3", "--compute-model h1000", "--layers 784,10 --widths 784-10",
                           // empty paths (were "not given": exit 0, nothing written), a baseline that is a directory
                           // (was exit 1 with a libstdc++ message)
                           "--data synthetic -J ''", "--data synthetic --trace ''", "--data synthetic --save-weights ''",
                           "--data synthetic --scaling-baseline /tmp"}) {
    const Exit e = runBinary(args);
    EXPECT_EQ(e.code, 2) << args << ": " << e.err;
    EXPECT_EQ(lines(e.err), 1) << args << ": " << e.err;
    EXPECT_EQ(e.err.rfind("cclab-train: ", 0), 0U) << e.err;
  }
}

constexpr const char* kTinyRun = "--data synthetic --synthetic-samples 1024 --widths 784-32-10 --workers 2 --batch 64 -q ";

TEST(Binary, AnUnwritableOutputIsRefusedBeforeTraining) {
  // 200 epochs would take minutes: the refusal must come first (exit 2, not a trained run and exit 1).
  const fs::path dir = fs::temp_directory_path();
  for (const std::string& flags : {"-J " + dir.string(), "--trace " + (dir / "cclab_no_such_dir" / "t.json").string()}) {
    const auto start = std::chrono::steady_clock::now();
    const Exit e = runBinary(std::string(kTinyRun) + "--epochs 200 " + flags);
    EXPECT_EQ(e.code, 2) << flags << ": " << e.err;
    EXPECT_EQ(lines(e.err), 1) << e.err;
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30)) << flags;
  }
}

// -J, --trace and --save-weights must name three files: the same path in another spelling, a symlink
// or a hard link to one file is refused before training (it compared -J and --trace as paths only, so
// --save-weights onto the -J file, or a link to it, trained and then kept only the later output).
TEST(Binary, OutputsNamingOneFileAreRefusedBeforeTraining) {
  const fs::path dir = fs::temp_directory_path() / ("cclab_train_same_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path json = dir / "r.json";
  std::ofstream(json) << "old";
  fs::create_hard_link(json, dir / "hard.json");
  fs::create_symlink(json, dir / "link.json");
  for (const std::string& flags : {"-J " + json.string() + " --save-weights " + json.string(),
                                   "-J " + json.string() + " --trace " + (dir / "hard.json").string(),
                                   "--trace " + (dir / "link.json").string() + " --save-weights " + (dir / "." / "r.json").string()}) {
    const Exit e = runBinary(std::string(kTinyRun) + "--epochs 2 " + flags);
    EXPECT_EQ(e.code, 2) << flags << ": " << e.err;
    EXPECT_EQ(lines(e.err), 1) << e.err;
    EXPECT_NE(e.err.find("name the same file"), std::string::npos) << e.err;
  }
  std::ifstream in(json);
  EXPECT_TRUE(std::string(std::istreambuf_iterator<char>(in), {}) == "old") << "an output replaced the file";
  fs::remove_all(dir);
}

// Under a file-size limit (`ulimit -f`) the write fails like a full disk: exit 1, one line naming the
// file, the old file kept, no temporary left (it was killed by SIGXFSZ: exit 153, nothing printed).
TEST(Binary, AFileSizeLimitFailsTheWriteWithOneLine) {
  const fs::path dir = fs::temp_directory_path() / ("cclab_train_fsize_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path trace = dir / "t.json", err = dir / "err";
  std::ofstream(trace) << "old";
  const std::string cmd = "ulimit -f 8; exec " + std::string(CCLAB_TRAIN_BINARY) + " " + kTinyRun + "--epochs 2 --trace " +
                          trace.string() + " >/dev/null 2>" + err.string();
  const int status = std::system(cmd.c_str());
  std::ifstream in(err);
  const std::string text{std::istreambuf_iterator<char>(in), {}};
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << status << ": " << text;
  EXPECT_EQ(lines(text), 1) << text;
  EXPECT_NE(text.find("cannot write '" + trace.string() + "'"), std::string::npos) << text;
  std::ifstream old(trace);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(old), {}), "old");
  fs::remove(err);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), {}), 1) << "no temporary file left behind";
  fs::remove_all(dir);
}

TEST(Binary, BadHyperParametersAndModeOptionsExitTwo) {
  for (const char* flags : {"--lr inf", "--lr nan", "--lr -1", "--momentum inf", "--dc-lambda 0.1", "--mode async --bucket 1M",
                            "--straggler 1:delay=1ms", "--shard random", "--shard label-skew:0", "--shard hard-to:2",
                            "--mode async --shard label-skew:1"}) {
    const Exit e = runBinary(std::string(kTinyRun) + "--epochs 1 " + flags);
    EXPECT_EQ(e.code, 2) << flags << ": " << e.err;
    EXPECT_EQ(lines(e.err), 1) << flags << ": " << e.err;
  }
}

// Runaways refused up front with the limit in one line (collectives/conventions/limits.h), within a
// second: a million-wide layer (a 3 GB matrix per worker) and a trace of a hundred million events.
TEST(Binary, RunawayModelsAndTracesAreRefusedWithTheLimit) {
  const fs::path trace = fs::temp_directory_path() / ("cclab_train_trace_" + std::to_string(::getpid()) + ".json");
  for (const std::string& flags : {std::string("--data synthetic --layers 784,1000000,10"),
                                   std::string(kTinyRun) + "--epochs 1000000 --trace " + trace.string()}) {
    const auto start = std::chrono::steady_clock::now();
    const Exit e = runBinary(flags);
    EXPECT_EQ(e.code, 2) << flags << ": " << e.err;
    EXPECT_EQ(lines(e.err), 1) << e.err;
    EXPECT_NE(e.err.find("more than the limit of"), std::string::npos) << e.err;
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10)) << flags;
  }
  EXPECT_FALSE(fs::exists(trace));
  const Exit wide = runBinary("--data synthetic --synthetic-samples 256 --layers 784,2000,10 --workers 2 --batch 64 --epochs 1 -q");
  EXPECT_EQ(wide.code, 0) << wide.err;
}

TEST(Binary, ADivergingRunFailsWithExitOneAndKeepsTheOldJson) {
  const fs::path dir = fs::temp_directory_path() / ("cclab_train_nan_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path json = dir / "r.json";
  std::ofstream(json) << "previous\n";
  for (const char* mode : {"sync", "async"}) {
    const Exit e = runBinary(std::string(kTinyRun) + "--epochs 2 --lr 1e30 --mode " + mode + " -J " + json.string());
    EXPECT_EQ(e.code, 1) << mode << ": " << e.err;
    EXPECT_EQ(lines(e.err), 1) << e.err;
    EXPECT_NE(e.err.find("diverged"), std::string::npos) << e.err;
  }
  std::ifstream in(json);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "previous\n");
  fs::remove_all(dir);
}

TEST(Binary, ASyntheticRunWritesJsonAndTrace) {
  const fs::path dir = fs::temp_directory_path() / ("cclab_train_run_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "r.json") << "previous\n";  // replaced whole
  const Exit e = runBinary(std::string(kTinyRun) + "--epochs 2 --straggler 1:compute=1.2 -J " + (dir / "r.json").string() +
                           " --trace " + (dir / "t.json").string());
  ASSERT_EQ(e.code, 0) << e.err;
  std::ifstream in(dir / "r.json");
  const auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j.at("schema"), "cclab-train/1");
  EXPECT_EQ(j.at("config").at("workers"), 2);
  EXPECT_EQ(j.at("epochs").size(), 2U);
  EXPECT_EQ(j.at("config").at("straggler").at("spec"), "1:compute=1.2");
  EXPECT_DOUBLE_EQ(j.at("config").at("straggler").at("factor").get<double>(), 1.2);
  for (const char* key : {"samples_per_s", "comm_fraction", "overlap_ratio", "final_test_accuracy", "staleness",
                          "scaling_efficiency", "straggler_slowdown", "compute_us", "exposed_comm_us", "wait_us"})
    EXPECT_TRUE(j.at("summary").contains(key)) << key;
  std::ifstream tin(dir / "t.json");
  const auto t = nlohmann::json::parse(tin);
  EXPECT_FALSE(t.at("traceEvents").empty());
  std::size_t files = 0;  // no temporary file left beside the outputs
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir)) ++files;
  EXPECT_EQ(files, 2U);
  fs::remove_all(dir);
}

TEST(Baseline, OnlyAMatchingConfigurationIsAccepted) {
  TrainConfig c;
  c.mode = Mode::Sync;
  c.workers = 4;
  c.batch = 128;
  c.widths = {784, 64, 10};
  c.straggler = {.rank = 1, .computeFactor = 1.4};
  const nlohmann::json run = configToJson(c, "synthetic");
  TrainConfig same = c;
  same.straggler = {};
  same.seed = 99;  // throughput-neutral
  same.epochs = 7;
  const BaselineRun free{100.0, 4, configToJson(same, "synthetic")};
  EXPECT_NO_THROW(checkBaseline(BaselineKind::Straggler, run, free, "b.json"));
  const auto refused = [&](BaselineKind kind, const TrainConfig& b, int workers, const std::string& field) {
    try {
      checkBaseline(kind, run, {100.0, workers, configToJson(b, "synthetic")}, "b.json");
      ADD_FAILURE() << field << ": accepted";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    }
  };
  TrainConfig other = same;
  other.widths = {784, 256, 10};
  refused(BaselineKind::Straggler, other, 4, "widths");
  other = same;
  other.batch = 256;
  refused(BaselineKind::Straggler, other, 4, "batch");
  other = same;
  other.workers = 2;
  refused(BaselineKind::Straggler, other, 2, "worker");  // worker_batch or workers
  other = same;
  other.mode = Mode::Async;
  refused(BaselineKind::Straggler, other, 4, "mode");
  refused(BaselineKind::Straggler, c, 4, "straggler");  // a straggler run is no straggler-free baseline
  // Scaling: fewer workers, same everything else (the straggler included).
  TrainConfig one = c;
  one.workers = 1;
  EXPECT_NO_THROW(checkBaseline(BaselineKind::Scaling, run, {100.0, 1, configToJson(one, "synthetic")}, "b.json"));
  other = one;
  other.widths = {784, 10};
  refused(BaselineKind::Scaling, other, 1, "widths");
  other = c;
  other.workers = 8;
  refused(BaselineKind::Scaling, other, 8, "workers");
  EXPECT_THROW(checkBaseline(BaselineKind::Scaling, run, {100.0, 1, configToJson(one, "fashion-mnist")}, "b.json"),
               InvalidArgument);
}

TEST(Binary, AMismatchedBaselineIsRefusedWithExitTwo) {
  const fs::path dir = fs::temp_directory_path() / ("cclab_train_base_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string base = (dir / "base.json").string();
  ASSERT_EQ(runBinary(std::string(kTinyRun) + "--epochs 1 -J " + base).code, 0);
  const Exit ok = runBinary(std::string(kTinyRun) + "--epochs 1 --straggler 1:compute=2 --straggler-baseline " + base +
                            " -J " + (dir / "s.json").string());
  ASSERT_EQ(ok.code, 0) << ok.err;
  std::ifstream in(dir / "s.json");
  const auto j = nlohmann::json::parse(in);
  EXPECT_TRUE(j.at("summary").at("straggler_slowdown").is_number());
  EXPECT_EQ(j.at("summary").at("ranks").size(), 2U);
  EXPECT_TRUE(j.at("summary").at("stragglers").at("detectable").get<bool>());
  EXPECT_FALSE(j.at("arrivals").empty());
  ASSERT_FALSE(j.at("allreduces").empty());
  auto order = j.at("allreduces").at(0).at("order").get<std::vector<int>>();
  std::sort(order.begin(), order.end());
  EXPECT_EQ(order, (std::vector<int>{0, 1}));
  const Exit bad = runBinary("--data synthetic --synthetic-samples 1024 --widths 784-64-10 --workers 2 --batch 64 -q "
                             "--epochs 1 --straggler 1:compute=2 --straggler-baseline " + base);
  EXPECT_EQ(bad.code, 2) << bad.err;
  EXPECT_EQ(lines(bad.err), 1) << bad.err;
  EXPECT_NE(bad.err.find("widths"), std::string::npos) << bad.err;
  const Exit more = runBinary("--data synthetic --synthetic-samples 1024 --widths 784-32-10 --workers 1 --batch 64 -q "
                              "--epochs 1 --scaling-baseline " + base);
  EXPECT_EQ(more.code, 2) << more.err;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace cclab::trainer
