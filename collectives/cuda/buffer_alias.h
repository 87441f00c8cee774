// In-place calls: where a rank's input lies inside its output, or its output inside its input.
//
// The plan names three buffers per rank (Input, Output, Scratch). In place (NCCL's layout, see
// communicator.h) two of them are one memory, and the lowering must know it: a write to the output
// can then overwrite input that a peer has not read yet. Pure host logic, unit-tested on the CPU.
#pragma once

#include <cstddef>
#include <cstdint>

#include "collectives/plan/plan.h"

namespace cclab::cuda {

struct BufferAlias {
  enum class Kind : std::uint8_t { None, InputInOutput, OutputInInput };
  Kind kind = Kind::None;
  std::int64_t offset = 0;  // elements: input starts at output + offset (or output at input + offset)
  friend bool operator==(const BufferAlias&, const BufferAlias&) = default;
};

// A position in a rank's memory once aliases are resolved: which distinct buffer, which element.
struct Location {
  int space = 0;  // 0 input, 1 output, 2 scratch (an aliased buffer takes its host buffer's space)
  std::int64_t offset = 0;
  friend bool operator==(const Location&, const Location&) = default;
};

Location locate(plan::Buf buf, std::int64_t offset, BufferAlias alias);
// Do [a, a+na) and [b, b+nb) (element ranges of one rank) share an element?
bool overlaps(plan::Range a, plan::Range b, BufferAlias alias);

// The alias of one rank's call from its pointers. Disjoint buffers: None. NCCL's in-place layout:
// InputInOutput (allreduce, broadcast, reduce, allgather) or OutputInInput (reduceScatter). Any other
// overlap throws InvalidArgument.
BufferAlias detectAlias(plan::Collective c, int rank, std::int64_t count, std::size_t elemSize, const void* send,
                        const void* recv, std::int64_t inputElems, std::int64_t outputElems);

}  // namespace cclab::cuda
