// Where a synchronous worker's blocked time went, from the ranks' arrivals at each bucket's allreduce.
// A bucket's allreduce on rank r runs from r's arrival to its end; the part before the last rank
// arrives is waiting for peers, the rest is real communication. For each step record:
//   waitNs        = blocked time (end of backward .. all buckets reduced) spent in peer-waiting parts
//   exposedCommNs = the rest of the blocked time
//   commBusyNs    = real communication (allreduce time after the last arrival), hidden or not
//   overlappedNs  = real communication that ran during the worker's forward+backward
//   peerWaitNs    = all peer-waiting time of this rank's allreduces, hidden or not
// So compute + wait + exposed comm = step time, and waiting for a straggler never counts as overlap.
#pragma once

#include <span>

#include "trainer/metrics/records.h"

namespace cclab::trainer {

void attributeSyncWaits(std::span<StepRecord> steps, std::span<const BucketArrival> arrivals);

}  // namespace cclab::trainer
