// PlannedCall (planned_call.h): resolve, check, count; the null-buffer check and Avg's finish.
#include "collectives/call/planned_call.h"

#include <algorithm>
#include <string>

#include "collectives/call/checks.h"
#include "collectives/core/errors.h"

namespace cclab {

void checkRankBuffers(std::string_view who, const CollectiveArgs& args, const plan::BufferCounts& counts, int rank,
                      RankBuffers buffers) {
  if ((counts.input > 0 && !buffers.send) || (writesOutput(args, rank) && counts.output > 0 && !buffers.recv))
    throw InvalidArgument(std::string(who) + ": rank " + std::to_string(rank) + " passed a null buffer");
}

PlannedCall::PlannedCall(const Communicator& comm, const CollectiveArgs& args, const CollectiveOptions& options,
                         std::size_t defaultSliceBytes)
    : args_(args), algorithm_(comm.resolve(args, options.algorithm)), nranks_(comm.nranks()) {
  checkArgs(args, nranks_, algorithm_);
  checkShape(options, nranks_, algorithm_);
  checkSlicing(args, nranks_, options.sliceBytes, defaultSliceBytes);
  counts_ = plan::bufferCounts(args.collective, nranks_, args.count);
  elem_ = sizeOf(args.type);
  const std::size_t slice = options.sliceBytes ? options.sliceBytes : defaultSliceBytes;
  sliceElems_ = slice == 0 ? 0 : static_cast<std::int64_t>(std::max<std::size_t>(1, slice / elem_));
}

void PlannedCall::finishAvgOnHost(int rank, void* recv) const {
  if (averages(rank)) finishAvg(recv, static_cast<std::size_t>(counts_.output), args_.type, nranks_);
}

RunOptions PlannedCall::runOptions(const CollectiveOptions& options, int rank) const {
  RunOptions ro;
  ro.elemSize = elem_;
  ro.reduce = hostReduceFn(args_.type, args_.op);
  ro.sliceElems = sliceElems_;
  ro.timeout = options.timeout;
  if (options.straggler.rank == rank) ro.startDelay = options.straggler.startDelay;
  return ro;
}

}  // namespace cclab
