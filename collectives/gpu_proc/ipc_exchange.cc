#include "collectives/gpu_proc/ipc_exchange.h"

#include <algorithm>
#include <cstring>
#include <set>
#include <tuple>

#include "collectives/core/errors.h"

namespace cclab::cuda {
namespace {

constexpr std::array<char, 8> kMagic = {'C', 'C', 'L', 'A', 'B', 'I', 'P', 'C'};
constexpr std::uint32_t kVersion = 1;

class Writer {
 public:
  template <class T>
  void put(T v) {  // fixed width, little-endian
    static_assert(std::is_integral_v<T>);
    using U = std::make_unsigned_t<T>;
    auto u = static_cast<U>(v);
    for (std::size_t i = 0; i < sizeof(T); ++i) out_.push_back(static_cast<std::byte>((u >> (8 * i)) & 0xFFU));
  }
  void bytes(const void* p, std::size_t n) {
    const auto* b = static_cast<const std::byte*>(p);
    out_.insert(out_.end(), b, b + n);
  }
  std::vector<std::byte> take() { return std::move(out_); }

 private:
  std::vector<std::byte> out_;
};

class Reader {
 public:
  explicit Reader(std::span<const std::byte> in) : in_(in) {}
  template <class T>
  T get(const char* what) {
    need(sizeof(T), what);
    using U = std::make_unsigned_t<T>;
    U u = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) u |= static_cast<U>(static_cast<U>(in_[pos_ + i]) << (8 * i));
    pos_ += sizeof(T);
    return static_cast<T>(u);
  }
  void bytes(void* p, std::size_t n, const char* what) {
    need(n, what);
    std::memcpy(p, in_.data() + pos_, n);
    pos_ += n;
  }
  [[nodiscard]] std::size_t left() const { return in_.size() - pos_; }

 private:
  void need(std::size_t n, const char* what) const {
    if (in_.size() - pos_ < n)
      throw InvalidArgument("cuda ipc: record from a peer is truncated at byte " + std::to_string(pos_) + " (" + what + ")");
  }
  std::span<const std::byte> in_;
  std::size_t pos_ = 0;
};

[[noreturn]] void bad(const std::string& what) { throw InvalidArgument("cuda ipc: " + what); }

}  // namespace

std::vector<std::byte> encode(const ProcessRecord& r) {
  if (r.ranks.size() > kMaxRanksPerRecord) bad("a record of " + std::to_string(r.ranks.size()) + " ranks is over the limit");
  if (r.regions.size() > kMaxRegionsPerRecord) bad("a record of " + std::to_string(r.regions.size()) + " regions is over the limit");
  if (r.deviceId.size() > kMaxDeviceIdBytes) bad("a device id of " + std::to_string(r.deviceId.size()) + " bytes is over the limit");
  Writer w;
  w.bytes(kMagic.data(), kMagic.size());
  w.put<std::uint32_t>(kVersion);
  w.put<std::int32_t>(r.process);
  w.put<std::int32_t>(r.pid);
  w.put<std::int32_t>(r.node);
  w.put<std::uint64_t>(r.sequence);
  w.put<std::uint16_t>(static_cast<std::uint16_t>(r.deviceId.size()));
  w.bytes(r.deviceId.data(), r.deviceId.size());
  w.put<std::uint32_t>(static_cast<std::uint32_t>(r.ranks.size()));
  for (int rank : r.ranks) w.put<std::int32_t>(rank);
  w.put<std::uint32_t>(static_cast<std::uint32_t>(r.regions.size()));
  for (const ExportedRegion& g : r.regions) {
    w.put<std::int32_t>(g.rank);
    w.put<std::uint8_t>(g.slot);
    w.put<std::uint8_t>(static_cast<std::uint8_t>(g.kind));
    w.bytes(g.handle.data(), g.handle.size());
    w.put<std::uint64_t>(g.offset);
    w.put<std::uint64_t>(g.bytes);
  }
  return w.take();
}

ProcessRecord decode(std::span<const std::byte> bytes) {
  Reader in(bytes);
  std::array<char, 8> magic{};
  in.bytes(magic.data(), magic.size(), "magic");
  if (magic != kMagic) bad("record from a peer does not start with the magic (not a cclab IPC record)");
  const auto version = in.get<std::uint32_t>("version");
  if (version != kVersion) bad("record from a peer has version " + std::to_string(version) + ", this build reads " + std::to_string(kVersion));
  ProcessRecord r;
  r.process = in.get<std::int32_t>("process");
  r.pid = in.get<std::int32_t>("pid");
  r.node = in.get<std::int32_t>("node");
  r.sequence = in.get<std::uint64_t>("sequence");
  if (r.process < 0 || r.node < 0) bad("record from a peer has a negative process or node");
  const auto idBytes = in.get<std::uint16_t>("device id length");
  if (idBytes > kMaxDeviceIdBytes) bad("record from a peer has a device id of " + std::to_string(idBytes) + " bytes");
  r.deviceId.resize(idBytes);
  in.bytes(r.deviceId.data(), idBytes, "device id");
  const auto nranks = in.get<std::uint32_t>("rank count");
  if (nranks > kMaxRanksPerRecord || nranks > in.left() / 4) bad("record from a peer declares " + std::to_string(nranks) + " ranks");
  for (std::uint32_t i = 0; i < nranks; ++i) {
    r.ranks.push_back(in.get<std::int32_t>("rank"));
    if (r.ranks.back() < 0 || (i > 0 && r.ranks.back() <= r.ranks[i - 1]))
      bad("record from process " + std::to_string(r.process) + " lists its ranks out of order or negative");
  }
  constexpr std::size_t kRegionBytes = 4 + 1 + 1 + kIpcHandleBytes + 8 + 8;
  const auto nregions = in.get<std::uint32_t>("region count");
  if (nregions > kMaxRegionsPerRecord || nregions > in.left() / kRegionBytes)
    bad("record from a peer declares " + std::to_string(nregions) + " regions");
  for (std::uint32_t i = 0; i < nregions; ++i) {
    ExportedRegion g;
    g.rank = in.get<std::int32_t>("region rank");
    g.slot = in.get<std::uint8_t>("region slot");
    const auto kind = in.get<std::uint8_t>("region kind");
    if (g.slot > kMaxSlot || kind > static_cast<std::uint8_t>(ExportKind::Event))
      bad("record from process " + std::to_string(r.process) + " has a region of unknown slot " + std::to_string(g.slot) +
          " or kind " + std::to_string(kind));
    g.kind = static_cast<ExportKind>(kind);
    in.bytes(g.handle.data(), g.handle.size(), "handle");
    g.offset = in.get<std::uint64_t>("region offset");
    g.bytes = in.get<std::uint64_t>("region bytes");
    if (g.offset + g.bytes < g.offset) bad("record from process " + std::to_string(r.process) + " has a region past 2^64");
    r.regions.push_back(g);
  }
  if (in.left() != 0) bad("record from process " + std::to_string(r.process) + " has " + std::to_string(in.left()) + " trailing bytes");
  return r;
}

NodeDirectory::NodeDirectory(std::vector<ProcessRecord> records, const ProcessRecord& self) : records_(std::move(records)) {
  std::sort(records_.begin(), records_.end(), [](const ProcessRecord& a, const ProcessRecord& b) { return a.process < b.process; });
  std::set<int> ranks;
  bool found = false;
  for (std::size_t i = 0; i < records_.size(); ++i) {
    const ProcessRecord& r = records_[i];
    const std::string who = "process " + std::to_string(r.process);
    if (i > 0 && records_[i - 1].process == r.process) bad(who + " sent two records");
    if (r.node != self.node) bad(who + " is on node " + std::to_string(r.node) + ", this process on node " + std::to_string(self.node));
    if (r.sequence != self.sequence)
      bad(who + " exchanged for call " + std::to_string(r.sequence) + ", this process for call " + std::to_string(self.sequence));
    for (int rank : r.ranks)
      if (!ranks.insert(rank).second) bad("rank " + std::to_string(rank) + " is driven by two processes (one is " + who + ")");
    std::set<std::tuple<int, int, int>> seen;
    for (const ExportedRegion& g : r.regions) {
      if (!std::binary_search(r.ranks.begin(), r.ranks.end(), g.rank))
        bad(who + " exports a region of rank " + std::to_string(g.rank) + ", which it does not drive");
      if (!seen.insert({g.rank, g.slot, static_cast<int>(g.kind)}).second)
        bad(who + " exports slot " + std::to_string(g.slot) + " of rank " + std::to_string(g.rank) + " twice");
    }
    if (r.process == self.process) {
      if (!(r == self)) bad("this process's own record came back changed");
      self_ = i;
      found = true;
    }
  }
  if (!found) bad("this process's own record (process " + std::to_string(self.process) + ") is missing from the exchange");
}

std::vector<int> NodeDirectory::ranks() const {
  std::vector<int> out;
  for (const ProcessRecord& r : records_) out.insert(out.end(), r.ranks.begin(), r.ranks.end());
  std::sort(out.begin(), out.end());
  return out;
}

const ProcessRecord* NodeDirectory::ownerOf(int rank) const {
  for (const ProcessRecord& r : records_)
    if (std::binary_search(r.ranks.begin(), r.ranks.end(), rank)) return &r;
  return nullptr;
}

bool NodeDirectory::local(int rank) const { return ownerOf(rank) == &self(); }

bool NodeDirectory::importable(int rank) const {
  const ProcessRecord* o = ownerOf(rank);
  return o != nullptr && o != &self();
}

const ExportedRegion* NodeDirectory::region(int rank, std::uint8_t slot, ExportKind kind) const {
  const ProcessRecord* o = ownerOf(rank);
  if (!o) return nullptr;
  for (const ExportedRegion& g : o->regions)
    if (g.rank == rank && g.slot == slot && g.kind == kind) return &g;
  return nullptr;
}

int NodeDirectory::ranksSharingDevice(int rank) const {
  const ProcessRecord* o = ownerOf(rank);
  if (!o) return 0;
  int n = 0;
  for (const ProcessRecord& r : records_)
    if (r.deviceId == o->deviceId) n += static_cast<int>(r.ranks.size());
  return n;
}

NodeDirectory exchangeRecords(RecordTransport& transport, const ProcessRecord& mine) {
  const std::vector<std::byte> bytes = encode(mine);
  std::vector<ProcessRecord> records;
  for (const std::vector<std::byte>& b : transport.allGather(bytes)) records.push_back(decode(b));
  return NodeDirectory(std::move(records), mine);
}

}  // namespace cclab::cuda
