#include "collectives/cuda/buffer_alias.h"

#include <cstdint>
#include <string>

#include "collectives/core/errors.h"

namespace cclab::cuda {

Location locate(plan::Buf buf, std::int64_t offset, BufferAlias alias) {
  switch (buf) {
    case plan::Buf::Input:
      if (alias.kind == BufferAlias::Kind::InputInOutput) return {1, offset + alias.offset};
      return {0, offset};
    case plan::Buf::Output:
      if (alias.kind == BufferAlias::Kind::OutputInInput) return {0, offset + alias.offset};
      return {1, offset};
    case plan::Buf::Scratch: return {2, offset};
  }
  return {2, offset};
}

bool overlaps(plan::Range a, plan::Range b, BufferAlias alias) {
  if (a.count <= 0 || b.count <= 0) return false;
  const Location la = locate(a.buf, a.offset, alias), lb = locate(b.buf, b.offset, alias);
  return la.space == lb.space && la.offset < lb.offset + b.count && lb.offset < la.offset + a.count;
}

BufferAlias detectAlias(plan::Collective c, int rank, std::int64_t count, std::size_t elemSize, const void* send,
                        const void* recv, std::int64_t inputElems, std::int64_t outputElems) {
  if (!send || !recv || inputElems <= 0 || outputElems <= 0) return {};
  const auto s = reinterpret_cast<std::uintptr_t>(send), r = reinterpret_cast<std::uintptr_t>(recv);
  const auto inBytes = static_cast<std::uintptr_t>(inputElems) * elemSize;
  const auto outBytes = static_cast<std::uintptr_t>(outputElems) * elemSize;
  if (s + inBytes <= r || r + outBytes <= s) return {};
  const std::int64_t inOff = plan::inPlaceInputOffset(c, rank, count);
  const std::int64_t outOff = plan::inPlaceOutputOffset(c, rank, count);
  if (c == plan::Collective::ReduceScatter) {
    if (r == s + static_cast<std::uintptr_t>(outOff) * elemSize) return {BufferAlias::Kind::OutputInInput, outOff};
  } else if (s == r + static_cast<std::uintptr_t>(inOff) * elemSize) {
    return {BufferAlias::Kind::InputInOutput, inOff};
  }
  throw InvalidArgument("cuda: rank " + std::to_string(rank) +
                        "'s send and recv buffers overlap without being NCCL's in-place layout");
}

}  // namespace cclab::cuda
