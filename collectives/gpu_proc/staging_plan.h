// The staging plan of the multi-process CUDA backend ("GPUs in processes"): which slices of
// a lowered plan (lowering.h) cross between nodes, and where each lies in pinned host memory.
//
// Within a node a receiving step reads the sender's device memory (peer access, or an IPC mapping
// when the sender is another process). Between nodes it cannot, and the OpenMPI here is not
// CUDA-aware (mpi/cuda_aware.h), so every step whose source rank is on another node becomes a staged
// message:
//   sender:   after its program finished step `ready` (the receiving step's data-ready wait, so the
//             sent range holds the data), copy `src` device -> pinned host at `sendOffset`; after
//             step `postAfter` (the latest `ready` of this and the earlier messages on its
//             connection, so sends are posted in sequence) MPI_Isend it (tag = channel: MPI's order
//             per (source, tag) is the plan's FIFO per connection (channel, from, to), and
//             `sequence` is the message's place in it);
//   receiver: MPI_Irecv into its pinned host memory at `recvOffset`; the receiving step then reads
//             that (mapped, so the kernel reads it over the bus) instead of the sender's memory.
// Once the copy to the host is done the sender's range is free: its write-after-send waits on a
// reader in another node become waits on that copy. Every message has its own bytes on both sides
// (offsets in issue order, aligned), so no message overwrites another still in flight; the pinned
// memory a rank needs is the sum of its messages. Pure host logic, unit-tested on the CPU by
// executing a lowered plan with the staging on host memory against the interpreter.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "collectives/cuda/lowering.h"

namespace cclab::cuda {

struct StagedMessage {
  int from = 0;       // sender rank
  int to = 0;         // receiver rank
  int channel = 0;    // the plan channel (MPI tag)
  std::int64_t sequence = 0;  // k-th message on (channel, from, to)
  StepRef reader;     // the receiving program and its step that reads the message
  StepRef ready;      // the sender's program and the step after which `src` holds the data
  StepRef postAfter;  // same program: max(ready) over this and the earlier messages of the connection
  plan::Range src;    // on the sender
  std::uint64_t bytes = 0;
  std::uint64_t sendOffset = 0;  // into the sender's pinned staging
  std::uint64_t recvOffset = 0;  // into the receiver's pinned staging
};

struct StagingPlan {
  std::vector<StagedMessage> messages;  // in the lowering's issue order of the reading steps
  std::vector<std::uint64_t> sendBytes;  // per rank: pinned bytes for its outgoing messages
  std::vector<std::uint64_t> recvBytes;  // per rank: pinned bytes for its incoming messages
  // Per rank, indices into `messages`: what it sends (in the order its process must post them:
  // issue order, so per connection in sequence) and what it receives.
  std::vector<std::vector<int>> outgoing, incoming;
  // The message a step reads, or -1 (indexed like LoweredPlan::programs[p].steps[s]).
  [[nodiscard]] int messageOf(StepRef step) const;
  std::vector<std::vector<int>> byStep;  // [program][step]
};

inline constexpr std::size_t kStagingAlign = 256;  // each message starts on its own 256-byte boundary

// `nodeOf[r]`: the node of rank r (size lowered.nranks). Throws InvalidArgument for a bad node table
// or element size, std::logic_error for a step without the data-ready wait lowering always adds.
StagingPlan planStaging(const LoweredPlan& lowered, std::span<const int> nodeOf, std::size_t elemSize);

}  // namespace cclab::cuda
