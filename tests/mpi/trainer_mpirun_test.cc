// cclab-train under mpirun: one worker per process through the proc backend. Each
// test starts the real binary: the thread backend's run and the mpirun run of the same global batch
// must end on the same weights (float tolerance), rank 0 alone prints the summary and writes -J, and
// that report holds every rank's figures. Not an MPI job itself: it launches mpirun (bounded by
// `timeout`), so ctest runs it as a plain test.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <chrono>
#include <cstdint>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "collectives/core/errors.h"
#include "nlohmann/json.hpp"
#include "trainer/report/weights_file.h"

namespace cclab::trainer {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kTrain = CCLAB_TRAIN_BINARY;
const std::string kMpirun = CCLAB_MPIRUN_LINE;  // mpirun --oversubscribe --bind-to none [--allow-run-as-root]
// A few seconds per run: 784 features of a synthetic task, a small MLP, buckets small enough that
// each step makes several allreduces of sizes that are not powers of two.
const std::string kRun =
    " --data synthetic --synthetic-samples 600 --layers 784,24,16,10 --epochs 2 --steps-per-epoch 3 --batch 48"
    " --first-bucket 512 --bucket 1K -q";

struct Output {
  int status = -1;
  std::string text;  // stdout and stderr
};

Output shell(const std::string& command) {
  Output o;
  FILE* p = popen(("timeout 60 " + command + " 2>&1").c_str(), "r");
  if (!p) return o;
  char buf[4096];
  for (std::size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) o.text.append(buf, n);
  const int st = pclose(p);
  o.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return o;
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("cclab-trainer-mpirun-" + std::to_string(getpid()));
  fs::create_directories(dir);
  return dir / name;
}

// The scratch folder goes when the tests end.
class RemoveScratch : public ::testing::Environment {
 public:
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(scratch("x").parent_path(), ec);
  }
};
const auto* const kRemoveScratch = ::testing::AddGlobalTestEnvironment(new RemoveScratch);

json readJson(const fs::path& p) {
  std::ifstream in(p);
  return json::parse(in);
}

// Largest |a - b| beyond 1e-5 + 1e-4 |a| (0: all within); also fails on different sizes.
void expectClose(const std::vector<float>& a, const std::vector<float>& b) {
  ASSERT_EQ(a.size(), b.size());
  ASSERT_FALSE(a.empty());
  std::size_t bad = 0;
  double worst = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double d = std::abs(static_cast<double>(a[i]) - b[i]);
    worst = std::max(worst, d);
    if (!(d <= 1e-5 + 1e-4 * std::abs(a[i]))) ++bad;
  }
  EXPECT_EQ(bad, 0U) << "of " << a.size() << " weights differ beyond tolerance; largest difference " << worst;
}

// The thread backend's and the proc backend's runs of the same command; returns the proc run's -J.
// ranksPerNode > 0: the proc run emulates nodes of that many ranks (CCLAB_RANKS_PER_NODE).
json compareWithThreads(int np, const std::string& extra, int ranksPerNode = 0) {
  const std::string tag = std::to_string(np) + (ranksPerNode ? "e" : "");
  const std::string env = ranksPerNode ? "env CCLAB_RANKS_PER_NODE=" + std::to_string(ranksPerNode) + " " : "";
  const std::string launcher = kMpirun + (ranksPerNode ? " -x CCLAB_RANKS_PER_NODE" : "");
  const fs::path threads = scratch("threads" + tag + ".bin"), procs = scratch("procs" + tag + ".bin");
  const fs::path threadsJson = scratch("threads" + tag + ".json"), procsJson = scratch("procs" + tag + ".json");
  const Output t = shell(kTrain + kRun + extra + " --workers " + std::to_string(np) + " --save-weights " + threads.string() +
                         " -J " + threadsJson.string());
  EXPECT_EQ(t.status, 0) << t.text;
  const Output p = shell(env + launcher + " -np " + std::to_string(np) + " " + kTrain + kRun + extra +
                         " --save-weights " + procs.string() + " -J " + procsJson.string());
  EXPECT_EQ(p.status, 0) << p.text;
  if (t.status != 0 || p.status != 0) return json();
  // Rank 0 alone prints: one header, one summary, one line per rank's process.
  EXPECT_EQ(count(p.text, "# cclab-train: sync " + std::to_string(np) + " workers"), 1) << p.text;
  EXPECT_EQ(count(p.text, "# communicator: proc: " + std::to_string(np) + " ranks as processes on " +
                              (ranksPerNode ? std::to_string(np / ranksPerNode) + " emulated nodes" : "1 node")),
            1)
      << p.text;
  for (int r = 0; r < np; ++r) EXPECT_EQ(count(p.text, "#   rank   " + std::to_string(r) + ": pid "), 1) << p.text;
  expectClose(readWeights(threads), readWeights(procs));
  // The epochs' losses summed over the processes equal the threads' (the test loss: rank 0's replica).
  const json tj = readJson(threadsJson), pj = readJson(procsJson);
  EXPECT_EQ(pj["epochs"].size(), tj["epochs"].size());
  for (std::size_t e = 0; e < std::min(pj["epochs"].size(), tj["epochs"].size()); ++e) {
    EXPECT_NEAR(pj["epochs"][e]["train_loss"].get<double>(), tj["epochs"][e]["train_loss"].get<double>(), 1e-4);
    EXPECT_NEAR(pj["epochs"][e]["test_accuracy"].get<double>(), tj["epochs"][e]["test_accuracy"].get<double>(), 1e-3);
  }
  EXPECT_EQ(pj["summary"]["allreduced_bytes_per_rank_step"], tj["summary"]["allreduced_bytes_per_rank_step"]);
  return pj;
}

// The -J of an np-process run holds every rank's figures.
void expectEveryRank(const json& j, int np) {
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["config"]["workers"], np);
  EXPECT_EQ(j["config"]["backend"], "proc");
  EXPECT_EQ(j["summary"]["replica_divergence"], 0.0);
  ASSERT_EQ(j["machine"]["ranks"].size(), static_cast<std::size_t>(np));
  std::set<std::string> where(j["machine"]["ranks"].begin(), j["machine"]["ranks"].end());
  EXPECT_EQ(where.size(), static_cast<std::size_t>(np)) << "every rank a process of its own (distinct pids)";
  ASSERT_EQ(j["summary"]["ranks"].size(), static_cast<std::size_t>(np));
  std::vector<int> steps(static_cast<std::size_t>(np)), arrivals(static_cast<std::size_t>(np));
  for (const json& s : j["steps"]) ++steps.at(s["rank"].get<std::size_t>());
  for (const json& a : j["arrivals"]) ++arrivals.at(a["rank"].get<std::size_t>());
  for (int r = 0; r < np; ++r) {
    const json& f = j["summary"]["ranks"][static_cast<std::size_t>(r)];
    EXPECT_EQ(f["rank"], r);
    EXPECT_EQ(f["steps"], 6) << "rank " << r;  // 2 epochs x 3 steps
    EXPECT_GT(f["compute_us"].get<double>(), 0.0) << "rank " << r;
    EXPECT_EQ(steps[static_cast<std::size_t>(r)], 6) << "rank " << r;
    EXPECT_EQ(arrivals[static_cast<std::size_t>(r)], 3 * 6) << "rank " << r << ": 3 buckets per step";
    EXPECT_EQ(arrivals[static_cast<std::size_t>(r)], arrivals[0]);
  }
  EXPECT_TRUE(j["summary"]["stragglers"]["detectable"].get<bool>());
}

TEST(TrainerUnderMpirun, TwoProcessesEndOnTheThreadBackendsWeights) {
  expectEveryRank(compareWithThreads(2, ""), 2);
}

TEST(TrainerUnderMpirun, FourProcessesEndOnTheThreadBackendsWeights) {
  expectEveryRank(compareWithThreads(4, ""), 4);
}

// Emulated nodes of two ranks: the hierarchical allreduce, MPI between the nodes (other summation
// order than the threads' ring: equal within the tolerance, not bit for bit).
TEST(TrainerUnderMpirun, EmulatedNodesWithHierEndWithinToleranceOfTheThreads) {
  expectEveryRank(compareWithThreads(4, " --algo hier", 2), 4);
}

// --shard splits alike in every process (each derives the split from the same data and seed), and the
// gradient statistics gathered from the processes are the threads' (per step, up to summation order).
TEST(TrainerUnderMpirun, ShardModesAndGradientStatisticsMatchTheThreads) {
  for (const std::string shard : {"label-skew:0.3", "hard-to:1"}) {
    const json pj = compareWithThreads(3, " --shard " + shard);
    expectEveryRank(pj, 3);
    if (!pj.is_object()) continue;
    const json tj = readJson(scratch("threads3.json"));
    EXPECT_EQ(pj["config"]["shard"], shard);
    ASSERT_EQ(pj["steps"].size(), tj["steps"].size());
    for (std::size_t i = 0; i < pj["steps"].size(); ++i) {
      const json &p = pj["steps"][i], &t = tj["steps"][i];
      ASSERT_EQ(p["rank"], t["rank"]);
      const double want = t["grad_variance"].get<double>();
      EXPECT_GT(want, 0.0) << shard;
      EXPECT_NEAR(p["grad_variance"].get<double>(), want, 1e-3 * want) << shard << " step record " << i;
      EXPECT_NEAR(p["grad_norm"].get<double>(), t["grad_norm"].get<double>(), 1e-3 * t["grad_norm"].get<double>());
    }
  }
}

// --straggler names a global rank: only that process slows its compute.
TEST(TrainerUnderMpirun, TheStragglerIsTheNamedGlobalRank) {
  const fs::path out = scratch("straggler.json");
  const Output p = shell(kMpirun + " -np 3 " + kTrain + kRun + " --straggler 2:compute=2 -J " + out.string());
  ASSERT_EQ(p.status, 0) << p.text;
  const json j = readJson(out);
  EXPECT_EQ(j["config"]["straggler"]["rank"], 2);
  std::vector<double> injected(3);
  for (const json& s : j["steps"]) injected.at(s["rank"].get<std::size_t>()) += s["injected_us"].get<double>();
  EXPECT_EQ(injected[0], 0.0);
  EXPECT_EQ(injected[1], 0.0);
  EXPECT_GT(injected[2], 0.0);
  // The throttle only sleeps longer than asked, never shorter, so the slowed rank realises at least
  // about its factor. No upper bound: 6 short steps leave the last sleep's overshoot unpaid, and on a
  // loaded machine (3 processes on 2 cores) one overshoot was 6.8x the step (the thread backend's own
  // test checks the factor to 5% over a longer run).
  const double realised = j["summary"]["ranks"][2]["realised_factor"].get<double>();
  EXPECT_GT(realised, 1.5);
  EXPECT_EQ(j["summary"]["ranks"][0]["realised_factor"].get<double>(), 1.0);
}

TEST(TrainerUnderMpirun, AsyncIsRefusedWithOneLine) {
  const Output p = shell(kMpirun + " -np 2 " + kTrain + " --data synthetic --mode async --epochs 1");
  EXPECT_EQ(p.status, 2) << p.text;
  EXPECT_NE(p.text.find("cclab-train: --mode async does not run under mpirun"), std::string::npos) << p.text;
  const Output t = shell(kTrain + " --data synthetic --mode async --backend proc --epochs 1");
  EXPECT_EQ(t.status, 2) << t.text;
  EXPECT_EQ(t.text, "cclab-train: --backend proc runs --mode sync only: the parameter server is not built across processes "
                    "(docs/trainer.md)\n");
}

TEST(TrainerUnderMpirun, WorkersThatAreNotTheProcessesAreRefused) {
  const Output p = shell(kMpirun + " -np 2 " + kTrain + kRun + " --workers 4");
  EXPECT_EQ(p.status, 2) << p.text;
  EXPECT_NE(p.text.find("--workers 4 but mpirun started 2 processes"), std::string::npos) << p.text;
  const Output t = shell(kTrain + kRun + " --backend proc");
  EXPECT_EQ(t.status, 2) << t.text;
  EXPECT_NE(t.text.find("proc backend unavailable: the proc backend runs under mpirun"), std::string::npos) << t.text;
}

// Under mpirun the batch divides over the processes (one worker each), not the default --workers 4.
TEST(TrainerUnderMpirun, TheBatchDividesOverTheProcesses) {
  const Output p = shell(kMpirun + " -np 2 " + kTrain +
                         " --data synthetic --synthetic-samples 600 --layers 784,24,10 --epochs 1 --steps-per-epoch 2 --batch 98 -q");
  EXPECT_EQ(p.status, 0) << p.text;
  EXPECT_EQ(count(p.text, "must be a positive multiple"), 0) << p.text;
}

// The start-of-job agreement: processes started with different hyper-parameters are refused before
// training, by rank 0 alone, naming the field and the ranks (they used to train apart and exit 0).
TEST(TrainerUnderMpirun, RanksWithDifferentHyperParametersAreRefused) {
  const Output p = shell(kMpirun + " -np 1 " + kTrain + kRun + " --lr 0.05 : -np 1 " + kTrain + kRun + " --lr 0.5");
  EXPECT_EQ(p.status, 2) << p.text;
  EXPECT_EQ(count(p.text, "cclab-train: ranks disagree on lr: rank 0 has '0.05"), 1) << p.text;
  EXPECT_EQ(count(p.text, "rank 1 has '0.5'"), 1) << p.text;
  EXPECT_EQ(count(p.text, "epoch"), 0) << p.text;
  const std::string base = " --data synthetic --synthetic-samples 600 --epochs 1 --steps-per-epoch 2 --batch 48 -q";
  const Output layers = shell(kMpirun + " -np 2 " + kTrain + base + " --layers 784,24,16,10 : -np 1 " + kTrain + base + " --layers 784,32,10");
  EXPECT_EQ(layers.status, 2) << layers.text;
  EXPECT_EQ(count(layers.text, "ranks disagree on widths: ranks 0-1 have '[784,24,16,10]', rank 2 has '[784,32,10]'"), 1)
      << layers.text;
}

// A small Fashion-MNIST-shaped data directory (the four IDX .gz files, 28x28 images): 96 training and
// 32 test samples whose pixels and labels follow from `seed`; `flipLabel` changes one training label.
void writeIdxGz(const fs::path& path, const std::vector<std::uint32_t>& dims, const std::vector<std::uint8_t>& payload) {
  std::vector<std::uint8_t> bytes{0, 0, 0x08, static_cast<std::uint8_t>(dims.size())};  // unsigned bytes
  for (std::uint32_t d : dims)
    for (int shift = 24; shift >= 0; shift -= 8) bytes.push_back(static_cast<std::uint8_t>(d >> shift));
  bytes.insert(bytes.end(), payload.begin(), payload.end());
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr) << path;
  ASSERT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())), static_cast<int>(bytes.size()));
  ASSERT_EQ(gzclose(f), Z_OK);
}

fs::path dataDir(const std::string& name, unsigned seed, bool flipLabel) {
  const fs::path dir = scratch(name);
  fs::create_directories(dir);
  const auto write = [&](const char* images, const char* labels, std::uint32_t n) {
    std::vector<std::uint8_t> pixels(std::size_t{n} * 28 * 28), classes(n);
    for (std::size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<std::uint8_t>((i * 2654435761U + seed) >> 13);
    for (std::uint32_t i = 0; i < n; ++i) classes[i] = static_cast<std::uint8_t>((i + seed) % 10);
    if (flipLabel && n == 96) classes[5] = static_cast<std::uint8_t>((classes[5] + 1) % 10);
    writeIdxGz(dir / images, {n, 28, 28}, pixels);
    writeIdxGz(dir / labels, {n}, classes);
  };
  write("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", 96);
  write("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz", 32);
  return dir;
}

// The data is part of the agreement, by content (data_fingerprint.h): ranks given directories whose
// files differ in one label are refused (they used to train apart and exit 0 at a lower accuracy);
// two copies of the same files under different paths run; the synthetic task's sample count too.
TEST(TrainerUnderMpirun, RanksOnDifferentDataAreRefused) {
  const fs::path a = dataDir("data-a", 7, false), b = dataDir("data-b", 7, true), copy = scratch("data-copy");
  fs::remove_all(copy);
  fs::copy(a, copy);
  const std::string base = " --layers 784,16,10 --epochs 1 --steps-per-epoch 2 --batch 32 -q";
  const Output differ = shell(kMpirun + " -np 1 " + kTrain + base + " --data-dir " + a.string() + " : -np 1 " + kTrain + base +
                              " --data-dir " + b.string());
  EXPECT_EQ(differ.status, 2) << differ.text;
  EXPECT_EQ(count(differ.text, "cclab-train: ranks disagree on --data-dir: rank 0 has 'content "), 1) << differ.text;
  EXPECT_EQ(count(differ.text, "rank 1 has 'content "), 1) << differ.text;
  EXPECT_EQ(count(differ.text, "epoch"), 0) << differ.text;
  const Output same = shell(kMpirun + " -np 1 " + kTrain + base + " --data-dir " + a.string() + " : -np 1 " + kTrain + base +
                            " --data-dir " + copy.string());
  EXPECT_EQ(same.status, 0) << same.text;
  const Output missing = shell(kMpirun + " -np 1 " + kTrain + base + " --data-dir " + a.string() + " : -np 1 " + kTrain + base +
                               " --data-dir " + scratch("no-such-dir").string());
  EXPECT_EQ(missing.status, 2) << missing.text;
  EXPECT_EQ(count(missing.text, "rank 1 has 'train-images-idx3-ubyte.gz: no such file'"), 1) << missing.text;
  const std::string synthetic = " --data synthetic --layers 784,16,10 --epochs 1 --steps-per-epoch 2 --batch 32 -q";
  const Output samples = shell(kMpirun + " -np 1 " + kTrain + synthetic + " --synthetic-samples 600 : -np 1 " + kTrain + synthetic +
                               " --synthetic-samples 900");
  EXPECT_EQ(samples.status, 2) << samples.text;
  EXPECT_EQ(count(samples.text, "cclab-train: ranks disagree on --synthetic-samples: rank 0 has '600', rank 1 has '900'"), 1)
      << samples.text;
}

// An algorithm file made for another rank count is a usage error of the agreement: one line from rank
// 0, exit 2, nothing trained (it used to print the header, then the error once per rank).
TEST(TrainerUnderMpirun, AnAlgorithmFileForOtherRanksIsRefusedInOneLine) {
  const Output p = shell(kMpirun + " -np 2 " + kTrain + kRun + " --algo file:" + CCLAB_ALGO_FILE_4);
  EXPECT_EQ(p.status, 2) << p.text;
  EXPECT_EQ(count(p.text, "is written for 4 ranks, not the 2 workers"), 1) << p.text;
  EXPECT_EQ(count(p.text, "cclab-train: --algo file:"), 1) << p.text;
  EXPECT_EQ(count(p.text, "# cclab-train:"), 0) << p.text;
}

// A process that only prints --help (or has a usage error) no longer leaves the others blocked in
// MPI_Init: every process initializes MPI first and the agreement ends the job.
TEST(TrainerUnderMpirun, HelpOrABadFlagOnOneRankEndsTheJob) {
  const Output help = shell(kMpirun + " -np 1 " + kTrain + kRun + " : -np 1 " + kTrain + " --help");
  EXPECT_EQ(help.status, 2) << help.text;
  EXPECT_EQ(count(help.text, "cclab-train: ranks disagree on --help: rank 0 has 'runs', rank 1 has 'asked for --help'"), 1)
      << help.text;
  const std::string base = " --data synthetic --synthetic-samples 600 --steps-per-epoch 2 --batch 48 -q";
  const Output bad = shell(kMpirun + " -np 2 " + kTrain + base + " --epochs 1 : -np 1 " + kTrain + base + " --epochs 0");
  EXPECT_EQ(bad.status, 2) << bad.text;
  EXPECT_EQ(count(bad.text, "cclab-train: rank 2: --epochs must be >= 1"), 1) << bad.text;
}

// A rank SIGKILLed mid-training: the job ends (non-zero) within seconds, not at the 30 s timeout.
TEST(TrainerUnderMpirun, AKilledRankEndsTheJob) {
  const fs::path marker = scratch("killed.json");  // names this job's processes
  const std::string command = kMpirun + " -np 3 " + kTrain +
                              " --data synthetic --synthetic-samples 3000 --layers 784,64,10 --epochs 1000 --batch 48 -q -J " +
                              marker.string() + " >/dev/null 2>&1";
  const auto start = std::chrono::steady_clock::now();
  const pid_t job = fork();
  ASSERT_GE(job, 0);
  if (job == 0) {
    execl("/bin/sh", "sh", "-c", ("exec timeout 60 " + command).c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  // Find rank 1's process (its environment says OMPI_COMM_WORLD_RANK=1) once training runs.
  pid_t victim = 0;
  for (int i = 0; i < 600 && victim == 0; ++i) {  // up to 30 s: mpirun starts slowly under load
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    for (const auto& e : fs::directory_iterator("/proc")) {
      const std::string name = e.path().filename();
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      std::ifstream cmd(e.path() / "cmdline"), env(e.path() / "environ");
      const std::string args((std::istreambuf_iterator<char>(cmd)), {}), vars((std::istreambuf_iterator<char>(env)), {});
      if (args.find(marker.string()) != std::string::npos && args.rfind(kTrain, 0) == 0 &&
          vars.find(std::string("OMPI_COMM_WORLD_RANK=1") + '\0') != std::string::npos)
        victim = std::stoi(name);
    }
  }
  ASSERT_GT(victim, 0) << "rank 1's process not found";
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // well into training
  const auto killed = std::chrono::steady_clock::now();
  kill(victim, SIGKILL);
  int status = 0;
  waitpid(job, &status, 0);
  const double afterKill = std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count();
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_NE(WEXITSTATUS(status), 0);
  EXPECT_NE(WEXITSTATUS(status), 124) << "timed out: the survivors hung";
  EXPECT_LT(afterKill, 15.0) << "seconds from the kill to the job's end";
  EXPECT_FALSE(fs::exists(marker)) << "a killed job wrote a report";
  EXPECT_GT(std::chrono::duration<double>(killed - start).count(), 1.5);
}

// --save-weights' format: raw float32, the count from the size; a torn file is refused.
TEST(WeightsFile, RoundTripsAndRefusesATornFile) {
  const std::vector<float> w{1.5F, -0.0F, 3.25e-7F, -1e30F, 7.0F};
  const fs::path p = scratch("w.bin");
  writeWeights(p, w);
  EXPECT_EQ(fs::file_size(p), w.size() * sizeof(float));
  const std::vector<float> back = readWeights(p);
  ASSERT_EQ(back.size(), w.size());
  EXPECT_EQ(std::memcmp(back.data(), w.data(), w.size() * sizeof(float)), 0);
  fs::resize_file(p, 4 * sizeof(float) + 2);
  EXPECT_THROW(readWeights(p), Error);
  EXPECT_THROW(readWeights(scratch("missing.bin")), Error);
}

}  // namespace
}  // namespace cclab::trainer
