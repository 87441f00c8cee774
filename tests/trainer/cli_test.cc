#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "collectives/core/errors.h"
#include "nlohmann/json.hpp"
#include "trainer/cli/options.h"
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
                        "--lr", "0.05", "--algo", "ring", "--backend", "host", "--dc-lambda", "0.04", "--ssp", "4",
                        "--straggler", "1:1.4", "-J", "run.json", "--bucket", "64K", "--first-bucket", "8K"});
  ASSERT_TRUE(o);
  EXPECT_EQ(o->train.mode, Mode::Async);
  EXPECT_EQ(o->train.workers, 4);
  EXPECT_EQ(o->train.sync.algorithm, plan::Algorithm::Ring);
  EXPECT_FLOAT_EQ(o->train.async.dcLambda, 0.04F);
  EXPECT_EQ(o->train.async.sspBound, 4);
  EXPECT_EQ(o->train.straggler.rank, 1);
  EXPECT_DOUBLE_EQ(o->train.straggler.factor, 1.4);
  EXPECT_EQ(o->train.sync.bucketBytes, 64U * 1024);
  EXPECT_EQ(o->train.sync.firstBucketBytes, 8U * 1024);
  EXPECT_EQ(o->output.jsonPath, "run.json");
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
      {"--algo", "butterfly"},
      {"--backend", "tpu"},
      {"--bucket", "25Q"},
      {"--widths", "784-abc-10"},
      {"--data", "imagenet"},
      {"--remainder", "keep"},
      {"--ssp", "-3"},
      {"--dc-lambda", "-1"},
      {"--epochs", "0"},
  };
  for (const auto& args : bad) EXPECT_THROW(parse(args), InvalidArgument) << args[0] << " " << (args.size() > 1 ? args[1] : "");
}

TEST(Options, ParsesSizes) {
  EXPECT_EQ(parseByteSize("4096"), 4096U);
  EXPECT_EQ(parseByteSize("25M"), 25U << 20);
  EXPECT_EQ(parseByteSize("1g"), 1U << 30);
  EXPECT_THROW(parseByteSize("M"), InvalidArgument);
  EXPECT_THROW(parseByteSize("12KB"), InvalidArgument);
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
                           "--mode async --backend cuda", "--data synthetic --widths 784-10-3"}) {
    const Exit e = runBinary(args);
    EXPECT_EQ(e.code, 2) << args << ": " << e.err;
    EXPECT_EQ(lines(e.err), 1) << args << ": " << e.err;
    EXPECT_EQ(e.err.rfind("cclab-train: ", 0), 0U) << e.err;
  }
}

TEST(Binary, ASyntheticRunWritesJsonAndTrace) {
  const fs::path dir = fs::temp_directory_path() / ("cclab_train_run_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const Exit e = runBinary("--data synthetic --synthetic-samples 1024 --widths 784-32-10 --workers 2 --epochs 2 --batch 64 -q -J " +
                           (dir / "r.json").string() + " --trace " + (dir / "t.json").string());
  ASSERT_EQ(e.code, 0) << e.err;
  std::ifstream in(dir / "r.json");
  const auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j.at("schema"), "cclab-train/1");
  EXPECT_EQ(j.at("config").at("workers"), 2);
  EXPECT_EQ(j.at("epochs").size(), 2U);
  for (const char* key : {"samples_per_s", "comm_fraction", "overlap_ratio", "final_test_accuracy", "staleness",
                          "scaling_efficiency", "straggler_slowdown", "compute_us", "exposed_comm_us", "wait_us"})
    EXPECT_TRUE(j.at("summary").contains(key)) << key;
  std::ifstream tin(dir / "t.json");
  const auto t = nlohmann::json::parse(tin);
  EXPECT_FALSE(t.at("traceEvents").empty());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace cclab::trainer
