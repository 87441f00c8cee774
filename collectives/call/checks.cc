// The checks every backend makes on a call (checks.h).
#include "collectives/call/checks.h"

#include <algorithm>
#include <string>

#include "collectives/core/errors.h"

namespace cclab {

void checkArgs(const CollectiveArgs& args, int nranks, plan::Algorithm resolved) {
  if (args.count < 0) throw InvalidArgument("count must be >= 0, got " + std::to_string(args.count));
  if (args.root < 0 || args.root >= nranks)
    throw InvalidArgument("root " + std::to_string(args.root) + " is not a rank of " + std::to_string(nranks));
  if (!plan::hasGenerator(args.collective, resolved))
    throw InvalidArgument("no " + std::string(plan::name(resolved)) + " algorithm for " +
                          std::string(plan::name(args.collective)));
  constexpr std::int64_t kMaxElements = std::int64_t{1} << 40;
  if (args.count > kMaxElements / nranks) throw InvalidArgument("count " + std::to_string(args.count) + " is too large");
}

void checkShape(const CollectiveOptions& o, int nranks, plan::Algorithm resolved) {
  if (o.channels < 0 || o.channels > plan::kMaxChannels)
    throw InvalidArgument("channels must be 1.." + std::to_string(plan::kMaxChannels) + " (0: the backend's default), got " +
                          std::to_string(o.channels));
  if (o.ranksPerNode < 0)
    throw InvalidArgument("ranksPerNode must be >= 0 (0: one node), got " + std::to_string(o.ranksPerNode));
  if (resolved == plan::Algorithm::Hierarchical && o.ranksPerNode > 0 && nranks % o.ranksPerNode != 0)
    throw InvalidArgument("hier needs ranksPerNode (" + std::to_string(o.ranksPerNode) + ") to divide the " +
                          std::to_string(nranks) + " ranks");
}

void checkSlicing(const CollectiveArgs& args, int nranks, std::size_t sliceBytes, std::size_t defaultSliceBytes) {
  const std::size_t elem = sizeOf(args.type);
  const std::size_t slice = sliceBytes ? sliceBytes : defaultSliceBytes;
  if (slice == 0 || args.count <= 0) return;  // whole ops, or nothing to cut
  const plan::BufferCounts c = plan::bufferCounts(args.collective, nranks, args.count);
  const std::int64_t largest = std::max(c.input, c.output);
  const auto sliceElems = static_cast<std::int64_t>(std::max<std::size_t>(1, slice / elem));
  const std::int64_t slices = largest / sliceElems + (largest % sliceElems != 0);
  if (slices > kMaxSlicesPerCall)
    throw InvalidArgument("slice of " + std::to_string(slice) + " bytes cuts a " +
                          std::to_string(static_cast<std::size_t>(largest) * elem) + "-byte buffer into " +
                          std::to_string(slices) + " slices, more than " + std::to_string(kMaxSlicesPerCall) +
                          " per call: use a slice of at least " +
                          std::to_string((static_cast<std::size_t>(largest) * elem + kMaxSlicesPerCall - 1) / kMaxSlicesPerCall) +
                          " bytes");
}

}  // namespace cclab
