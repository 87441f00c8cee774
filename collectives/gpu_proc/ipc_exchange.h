// The CUDA IPC handle exchange of the multi-process CUDA backend ("GPUs in processes").
//
// Every process of a node describes what it exports — per rank it drives, the IPC handles of the
// device memory peers must read (cudaIpcGetMemHandle: the handle names an allocation, so a region is
// the allocation's handle plus an offset and a length) and of events peers wait on
// (cudaIpcGetEventHandle) — in a ProcessRecord. The records are encoded to bytes, all-gathered over
// the node (RecordTransport: MPI_Allgather/MPI_Allgatherv on the node's communicator in the backend,
// a fake in the tests), decoded and checked into a NodeDirectory: who drives which rank, which
// device each process uses, and each rank's exported regions, which the importer opens
// (cudaIpcOpenMemHandle) once per (process, handle) and caches.
//
// The encoding is fixed-width little-endian fields behind a magic and a version, bounded in every
// count, and decoding refuses (InvalidArgument, one line) anything truncated, oversized, trailing or
// inconsistent: a peer's bytes are input. A handle is carried as 64 opaque bytes (CUDA_IPC_HANDLE_SIZE;
// ipc_resources.cc static_asserts it). Pure host logic (no CUDA, no MPI), unit-tested on the CPU.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace cclab::cuda {

inline constexpr std::size_t kIpcHandleBytes = 64;
using IpcHandle = std::array<std::byte, kIpcHandleBytes>;

enum class ExportKind : std::uint8_t { Memory = 0, Event = 1 };

// Slots the backend exports per rank (the plan's buffers, then its own words).
inline constexpr std::uint8_t kSlotInput = 0, kSlotOutput = 1, kSlotScratch = 2, kSlotProgress = 3, kSlotDone = 4;
inline constexpr std::uint8_t kMaxSlot = kSlotDone;

struct ExportedRegion {
  int rank = 0;
  std::uint8_t slot = 0;
  ExportKind kind = ExportKind::Memory;
  IpcHandle handle{};
  std::uint64_t offset = 0;  // into the allocation the handle names (0 for an event)
  std::uint64_t bytes = 0;   // (0 for an event)
  friend bool operator==(const ExportedRegion&, const ExportedRegion&) = default;
};

struct ProcessRecord {
  int process = 0;            // the process's index in the job (its MPI rank)
  int pid = 0;
  int node = 0;
  std::uint64_t sequence = 0;  // which exchange (call) this record is for: every process must agree
  std::string deviceId;        // the physical GPU (its UUID or PCI bus id): equal ids = one GPU
  std::vector<int> ranks;      // the ranks this process drives, ascending
  std::vector<ExportedRegion> regions;
  friend bool operator==(const ProcessRecord&, const ProcessRecord&) = default;
};

inline constexpr std::size_t kMaxRanksPerRecord = 1 << 16;
inline constexpr std::size_t kMaxRegionsPerRecord = 1 << 16;
inline constexpr std::size_t kMaxDeviceIdBytes = 128;

// Throws InvalidArgument for a record over the limits above.
std::vector<std::byte> encode(const ProcessRecord& record);
// Throws InvalidArgument ("cuda ipc: record from a peer ...") for anything that is not exactly one
// valid encoded record.
ProcessRecord decode(std::span<const std::byte> bytes);

// All-gather of variable-length byte strings over the processes of one node: returns every
// process's bytes, this one's included, in process order.
class RecordTransport {
 public:
  virtual ~RecordTransport() = default;
  virtual std::vector<std::vector<std::byte>> allGather(std::span<const std::byte> mine) = 0;
};

// The node as the exchange found it. Throws InvalidArgument when the records disagree: another
// node or sequence, a process twice, a rank driven twice, a region for a rank its process does not
// drive, a (rank, slot, kind) exported twice, or this process's own record missing or changed.
class NodeDirectory {
 public:
  NodeDirectory(std::vector<ProcessRecord> records, const ProcessRecord& self);

  [[nodiscard]] const std::vector<ProcessRecord>& records() const { return records_; }  // by process
  [[nodiscard]] const ProcessRecord& self() const { return records_[self_]; }
  [[nodiscard]] std::vector<int> ranks() const;  // every rank on the node, ascending
  // The record of the process driving `rank`, or nullptr when no process of this node drives it.
  [[nodiscard]] const ProcessRecord* ownerOf(int rank) const;
  [[nodiscard]] bool local(int rank) const;       // driven by this process
  [[nodiscard]] bool importable(int rank) const;  // driven by another process of this node (IPC)
  [[nodiscard]] const ExportedRegion* region(int rank, std::uint8_t slot, ExportKind kind = ExportKind::Memory) const;
  // Ranks of this node on the same physical GPU as `rank` (itself included): they share its SMs.
  [[nodiscard]] int ranksSharingDevice(int rank) const;

 private:
  std::vector<ProcessRecord> records_;
  std::size_t self_ = 0;
};

// Encodes `mine`, all-gathers over `transport`, decodes and checks every record.
NodeDirectory exchangeRecords(RecordTransport& transport, const ProcessRecord& mine);

}  // namespace cclab::cuda
