// The CUDA IPC handle exchange (ipc_exchange.h), with the all-gather done by a fake transport that
// holds every process's bytes: encode/decode round trips, the directory's answers, and refusals of
// every malformed or inconsistent record (a peer's bytes are input).
#include <gtest/gtest.h>

#include <random>

#include "collectives/core/errors.h"
#include "collectives/gpu_proc/ipc_exchange.h"

namespace cclab::cuda {
namespace {

IpcHandle handleOf(int seed) {
  IpcHandle h{};
  for (std::size_t i = 0; i < h.size(); ++i) h[i] = static_cast<std::byte>((seed * 131 + static_cast<int>(i) * 7) & 0xFF);
  return h;
}

// Process `proc` of a node drives ranks [proc*k, proc*k+k), exports input/output/progress memory and a
// done event for each.
ProcessRecord recordOf(int proc, int k, int node = 0, std::uint64_t seq = 5, std::string device = "GPU-0") {
  ProcessRecord r;
  r.process = proc;
  r.pid = 1000 + proc;
  r.node = node;
  r.sequence = seq;
  r.deviceId = std::move(device);
  for (int i = 0; i < k; ++i) {
    const int rank = proc * k + i;
    r.ranks.push_back(rank);
    r.regions.push_back({rank, kSlotInput, ExportKind::Memory, handleOf(rank * 10 + 1), 4096U * static_cast<unsigned>(i), 4004});
    r.regions.push_back({rank, kSlotOutput, ExportKind::Memory, handleOf(rank * 10 + 2), 0, 4004});
    r.regions.push_back({rank, kSlotProgress, ExportKind::Memory, handleOf(rank * 10 + 3), 64, 8});
    r.regions.push_back({rank, kSlotDone, ExportKind::Event, handleOf(rank * 10 + 4), 0, 0});
  }
  return r;
}

// The node's all-gather: every process's encoded record, in process order (this one's included).
class FakeTransport final : public RecordTransport {
 public:
  explicit FakeTransport(std::vector<std::vector<std::byte>> all) : all_(std::move(all)) {}
  std::vector<std::vector<std::byte>> allGather(std::span<const std::byte> mine) override {
    sentMine_ = std::vector<std::byte>(mine.begin(), mine.end());
    return all_;
  }
  std::vector<std::byte> sentMine_;

 private:
  std::vector<std::vector<std::byte>> all_;
};

TEST(IpcExchange, EncodeDecodeRoundTrip) {
  const ProcessRecord r = recordOf(3, 2, 1, 42, "GPU-8d2f0c1e");
  EXPECT_EQ(decode(encode(r)), r);
  const ProcessRecord empty{};
  EXPECT_EQ(decode(encode(empty)), empty);
}

TEST(IpcExchange, FourProcessesOfTwoRanksSeeTheWholeNode) {
  const int procs = 4, k = 2;
  std::vector<ProcessRecord> recs;
  std::vector<std::vector<std::byte>> all;
  for (int p = 0; p < procs; ++p) {
    recs.push_back(recordOf(p, k, 0, 5, p < 2 ? "GPU-A" : "GPU-B"));  // two GPUs, two processes each
    all.push_back(encode(recs.back()));
  }
  for (int self = 0; self < procs; ++self) {
    FakeTransport t(all);
    const NodeDirectory d = exchangeRecords(t, recs[static_cast<std::size_t>(self)]);
    EXPECT_EQ(t.sentMine_, all[static_cast<std::size_t>(self)]) << "what this process publishes";
    EXPECT_EQ(d.self().process, self);
    EXPECT_EQ(d.ranks(), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
    for (int rank = 0; rank < procs * k; ++rank) {
      ASSERT_NE(d.ownerOf(rank), nullptr);
      EXPECT_EQ(d.ownerOf(rank)->process, rank / k);
      EXPECT_EQ(d.local(rank), rank / k == self);
      EXPECT_EQ(d.importable(rank), rank / k != self);
      const ExportedRegion* in = d.region(rank, kSlotInput);
      ASSERT_NE(in, nullptr);
      EXPECT_EQ(in->handle, handleOf(rank * 10 + 1));
      EXPECT_EQ(in->offset, 4096U * static_cast<unsigned>(rank % k));
      const ExportedRegion* ev = d.region(rank, kSlotDone, ExportKind::Event);
      ASSERT_NE(ev, nullptr);
      EXPECT_EQ(ev->handle, handleOf(rank * 10 + 4));
      EXPECT_EQ(d.region(rank, kSlotDone, ExportKind::Memory), nullptr);
      EXPECT_EQ(d.region(rank, kSlotScratch), nullptr);
      EXPECT_EQ(d.ranksSharingDevice(rank), 4) << "two processes of two ranks per GPU";
    }
    EXPECT_EQ(d.ownerOf(8), nullptr);
    EXPECT_FALSE(d.importable(8));
  }
}

TEST(IpcExchange, RecordsArriveInAnyOrder) {
  std::vector<ProcessRecord> recs = {recordOf(2, 1), recordOf(0, 1), recordOf(1, 1)};
  std::vector<std::vector<std::byte>> all;
  for (const auto& r : recs) all.push_back(encode(r));
  FakeTransport t(all);
  const NodeDirectory d = exchangeRecords(t, recs[1]);
  ASSERT_EQ(d.records().size(), 3U);
  for (int p = 0; p < 3; ++p) EXPECT_EQ(d.records()[static_cast<std::size_t>(p)].process, p);
  EXPECT_EQ(d.self().process, 0);
}

void expectRefused(std::vector<ProcessRecord> recs, const ProcessRecord& self, const std::string& fragment) {
  std::vector<std::vector<std::byte>> all;
  for (const auto& r : recs) all.push_back(encode(r));
  FakeTransport t(all);
  try {
    (void)exchangeRecords(t, self);
    ADD_FAILURE() << "accepted; expected a refusal with '" << fragment << "'";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(IpcExchange, InconsistentNodesAreRefused) {
  const ProcessRecord a = recordOf(0, 2), b = recordOf(1, 2);
  expectRefused({a, recordOf(1, 2, 1)}, a, "is on node 1");
  expectRefused({a, recordOf(1, 2, 0, 6)}, a, "for call 6");
  expectRefused({a, a, b}, a, "two records");
  ProcessRecord overlap = recordOf(1, 2);
  overlap.ranks = {1, 2};
  overlap.regions.clear();
  expectRefused({a, overlap}, a, "rank 1 is driven by two processes");
  ProcessRecord foreign = b;
  foreign.regions.push_back({0, kSlotScratch, ExportKind::Memory, handleOf(9), 0, 4});
  expectRefused({a, foreign}, a, "does not drive");
  ProcessRecord twice = b;
  twice.regions.push_back(twice.regions.front());
  expectRefused({a, twice}, a, "twice");
  expectRefused({b}, a, "own record (process 0) is missing");
  ProcessRecord changed = a;
  changed.pid = 7;
  expectRefused({changed, b}, a, "came back changed");
}

TEST(IpcExchange, EveryTruncationAndTrailingByteIsRefused) {
  const std::vector<std::byte> good = encode(recordOf(1, 3));
  for (std::size_t n = 0; n < good.size(); ++n)
    EXPECT_THROW((void)decode(std::span(good).first(n)), InvalidArgument) << "truncated to " << n;
  std::vector<std::byte> longer = good;
  longer.push_back(std::byte{0});
  EXPECT_THROW((void)decode(longer), InvalidArgument);
}

TEST(IpcExchange, CorruptFieldsAreRefused) {
  const std::vector<std::byte> good = encode(recordOf(1, 1));
  auto corrupt = [&](std::size_t at, std::byte v) {
    std::vector<std::byte> b = good;
    b[at] = v;
    return b;
  };
  EXPECT_THROW((void)decode(corrupt(0, std::byte{'X'})), InvalidArgument) << "magic";
  EXPECT_THROW((void)decode(corrupt(8, std::byte{2})), InvalidArgument) << "version";
  EXPECT_THROW((void)decode(corrupt(15, std::byte{0x80})), InvalidArgument) << "negative process";
  // Offsets: magic 8, version 4, process/pid/node 12, sequence 8, id length 2 + 5 ("GPU-0"), rank count 4.
  const std::size_t rankCountAt = 8 + 4 + 12 + 8 + 2 + 5;
  EXPECT_THROW((void)decode(corrupt(rankCountAt + 3, std::byte{0x7F})), InvalidArgument) << "a huge rank count";
  const std::size_t regionCountAt = rankCountAt + 4 + 4;
  EXPECT_THROW((void)decode(corrupt(regionCountAt + 2, std::byte{0x7F})), InvalidArgument) << "a huge region count";
  EXPECT_THROW((void)decode(corrupt(regionCountAt + 4 + 4, std::byte{9})), InvalidArgument) << "an unknown slot";
  EXPECT_THROW((void)decode(corrupt(regionCountAt + 4 + 5, std::byte{2})), InvalidArgument) << "an unknown kind";
  // Random corruption never crashes: refused, or decoded into some record.
  std::mt19937 rng(12);
  for (int i = 0; i < 2000; ++i) {
    std::vector<std::byte> b = good;
    b[std::uniform_int_distribution<std::size_t>(0, b.size() - 1)(rng)] = static_cast<std::byte>(rng() & 0xFF);
    try {
      (void)decode(b);
    } catch (const InvalidArgument&) {
    }
  }
}

TEST(IpcExchange, OversizedRecordsAreRefusedBeforeEncoding) {
  ProcessRecord r = recordOf(0, 1);
  r.deviceId.assign(kMaxDeviceIdBytes + 1, 'x');
  EXPECT_THROW((void)encode(r), InvalidArgument);
}

}  // namespace
}  // namespace cclab::cuda
