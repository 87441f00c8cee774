// gloo_allreduce_perf: Gloo's ring allreduce (gloo::allreduce with AllreduceOptions::RING, the
// algorithm PyTorch's gloo backend runs) measured the way all_reduce_perf measures cclab: same flags
// (bench/peers/peer_options.h), table, JSON and exact check. Ranks are threads of this process, each
// with its own TCP device on loopback, as separate processes would have; they rendezvous through a
// shared in-memory HashStore.
//   MALLOC_MMAP_MAX_=0 gloo_allreduce_perf -g 4 -b 8 -e 256M -f 4
// Out of place: setInput(send) + setOutput(recv); in place: setOutput(recv) only. The options object
// of a size is built once, outside the timed loop. Each rank times its own loop between barriers;
// -a combines the per-rank times (default: mean).
#include <gloo/allreduce.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/hash_store.h>
#include <gloo/transport/tcp/device.h>

#include <barrier>
#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "bench/peers/peer_check.h"
#include "bench/peers/peer_main_util.h"
#include "bench/peers/peer_options.h"
#include "bench/peers/peer_report.h"
#include "bench/report/common_flags.h"
#include "bench/report/machine_info.h"
#include "bench/report/usage_error.h"

namespace cclab::bench {
namespace {

constexpr const char* kTool = "gloo_allreduce_perf";
constexpr const char* kLoopback = "127.0.0.1";
// Bound on rendezvous and on every Gloo wait: a rank that dies does not hang the others forever.
constexpr std::chrono::seconds kGlooTimeout{120};

// What the rank threads share: options, rendezvous, a barrier, and each rank's latest numbers.
class GlooRun {
 public:
  GlooRun(const PeerOptions& o, const TablePrinter& table)
      : o_(o), table_(table), sync_(o.nranks), seconds_(static_cast<std::size_t>(o.nranks)),
        wrong_(static_cast<std::size_t>(o.nranks)), errors_(static_cast<std::size_t>(o.nranks)) {}

  void rankMain(int rank) {
    try {
      runRank(rank);
    } catch (...) {
      errors_[static_cast<std::size_t>(rank)] = std::current_exception();
      sync_.arrive_and_drop();  // the others stop waiting for this rank (their Gloo calls then time out)
    }
  }
  void rethrowFirstError() const {
    for (const auto& e : errors_)
      if (e) std::rethrow_exception(e);
  }
  [[nodiscard]] const ResultLog& log() const { return log_; }

 private:
  template <typename T>
  void measureAll(int rank, const std::shared_ptr<gloo::Context>& ctx, PeerRankBuffers& buf) {
    for (std::int64_t size : sizesOf(o_.sweep)) {
      const CollectiveShape shape = shapeOf(plan::Collective::AllReduce, size, sizeof(T), o_.nranks);
      const Measurement oop = measure<T>(rank, ctx, shape, false, buf);
      const Measurement ip = measure<T>(rank, ctx, shape, true, buf);
      if (rank == 0) {
        ResultRow row = peerRow(shape, o_.type, oop, ip);
        table_.row(row);
        log_.add(std::move(row));
      }
    }
  }

  template <typename T>
  Measurement measure(int rank, const std::shared_ptr<gloo::Context>& ctx, const CollectiveShape& shape, bool inPlace,
                      PeerRankBuffers& buf) {
    const IterationOptions& it = o_.iteration;
    const PeerAllReduceCheck check(o_.type, o_.nranks, shape.count, seed_ + static_cast<std::uint64_t>(inPlace));
    const auto n = static_cast<std::size_t>(shape.count);
    auto* send = reinterpret_cast<T*>(buf.send.data());
    auto* recv = reinterpret_cast<T*>(buf.recv.data());
    gloo::AllreduceOptions opts(ctx);
    opts.setAlgorithm(gloo::AllreduceOptions::Algorithm::RING);
    if (!inPlace) opts.setInput(send, n);
    opts.setOutput(recv, n);
    opts.setReduceFunction([](void* c, const void* a, const void* b, std::size_t k) { gloo::sum<T>(c, a, b, k); });
    opts.setTimeout(kGlooTimeout);
    auto call = [&] {
      if (n) gloo::allreduce(opts);
    };
    void* input = inPlace ? static_cast<void*>(recv) : static_cast<void*>(send);
    if (it.check) check.fillInput(rank, input);
    const int warmup = it.warmupAt(shape.sizeBytes);
    const int iters = it.itersAt(shape.sizeBytes) * it.aggIters;
    for (int i = 0; i < warmup; ++i) call();
    sync_.arrive_and_wait();
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) call();
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    seconds_[static_cast<std::size_t>(rank)] = elapsed.count() / iters;
    if (it.check) {
      check.fillInput(rank, input);
      sync_.arrive_and_wait();  // no rank starts the check call while another still times
      call();
      wrong_[static_cast<std::size_t>(rank)] = check.countWrong(recv, buf.expected.data());
    }
    sync_.arrive_and_wait();  // every rank's numbers are in
    Measurement m;
    if (rank == 0) {
      std::optional<std::int64_t> wrong;
      if (it.check) {
        wrong = 0;
        for (std::int64_t w : wrong_) *wrong += w;
      }
      m = peerMeasurement(shape, o_.nranks, combineTimes(it.average, seconds_), wrong);
      seed_ += 2;
    }
    sync_.arrive_and_wait();  // rank 0 has read them before anyone overwrites them
    return m;
  }

  void runRank(int rank) {
    gloo::transport::tcp::attr attr(kLoopback);
    auto device = gloo::transport::tcp::CreateDevice(attr);
    auto ctx = std::make_shared<gloo::rendezvous::Context>(rank, o_.nranks);
    ctx->setTimeout(kGlooTimeout);
    ctx->connectFullMesh(store_, device);
    PeerRankBuffers buf(static_cast<std::size_t>(o_.sweep.maxBytes), o_.iteration.check != 0);
    std::shared_ptr<gloo::Context> base = ctx;
    switch (o_.type) {
      case DataType::Float64: measureAll<double>(rank, base, buf); break;
      case DataType::Int32: measureAll<std::int32_t>(rank, base, buf); break;
      default: measureAll<float>(rank, base, buf); break;
    }
  }

  const PeerOptions& o_;
  const TablePrinter& table_;
  gloo::rendezvous::HashStore store_;
  std::barrier<> sync_;
  std::vector<double> seconds_;
  std::vector<std::int64_t> wrong_;
  std::vector<std::exception_ptr> errors_;
  std::uint64_t seed_ = 1;  // read by every rank, advanced by rank 0 between barriers
  ResultLog log_;           // rank 0 only
};

int run(int argc, char** argv) {
  PeerOptions o;
  std::optional<JsonReportFile> json;
  try {
    CommandLine cli(kTool);
    addPeerFlags(cli, o, true);
    cli.parse(argc, argv);
    if (o.help) {
      std::fputs(cli.usage().c_str(), stdout);
      return kExitOk;
    }
    validate(o.sweep);
    if (!o.jsonPath.empty()) json.emplace(o.jsonPath);
    requirePeerMemory(o, o.nranks);
  } catch (const UsageError& e) {
    return peerFail(kTool, kExitUsage, e.what());
  }
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const TablePrinter table(stdout);
  const PeerIdentity id{kTool, "gloo", "ring",
                        "Gloo (Debian libgloo), gloo::allreduce RING, TCP over loopback, " + std::to_string(o.nranks) +
                            " ranks as threads"};
  try {
    printPeerHeader(table, id, o, o.nranks);
    table.columnHeader();
    GlooRun glooRun(o, table);
    std::vector<std::thread> ranks;
    for (int r = 0; r < o.nranks; ++r) ranks.emplace_back([&glooRun, r] { glooRun.rankMain(r); });
    for (auto& t : ranks) t.join();
    glooRun.rethrowFirstError();
    table.footer(glooRun.log());
    if (json) json->write(peerRunInfo(id, o, o.nranks, commandLineOf(argc, argv)), glooRun.log());
    return glooRun.log().failedChecks() ? kExitFailure : kExitOk;
  } catch (const std::exception& e) {
    return peerFail(kTool, kExitFailure, std::string("error: ") + e.what());
  }
}

}  // namespace
}  // namespace cclab::bench

int main(int argc, char** argv) { return cclab::bench::run(argc, argv); }
