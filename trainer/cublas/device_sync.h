// Synchronous data parallelism with the model on the device (--backend cuda): each worker's forward,
// backward and SGD run as a StepProgram on its rank's stream (cuBLAS GEMMs and small kernels), each
// bucket is allreduced in place on the device gradient as soon as its lowest layer's backward is
// enqueued (the allreduce follows the backward on the same stream), and the step's one wait is the
// rank's own stream (Communicator::synchronize(rank)). Rank 0's initial parameters are broadcast on
// the device. Parameters leave the device only at the end of an epoch (evaluation) and of the run.
//
// With the CPU reference runner (interpret.h) and the host backend, the same loop runs on this
// machine; tests/trainer/cublas_test.cc checks it against runSync.
#pragma once

#include <functional>
#include <memory>

#include "collectives/communicator.h"
#include "trainer/cublas/op_runner.h"
#include "trainer/data/dataset.h"
#include "trainer/metrics/records.h"
#include "trainer/run/observer.h"
#include "trainer/run/train_config.h"

namespace cclab::trainer::cublas {

using RunnerFactory = std::function<std::unique_ptr<OpRunner>(int rank, const RegionSizes& sizes)>;

// Throws InvalidArgument (one line) for what the device path does not do: a --model preset, an
// emulated device (--compute-model), a trace.
void checkDeviceConfig(const TrainConfig& config);

// makeRunner builds each rank's runner (the cuBLAS runner for the cuda backend, see cublas_runner.h).
RunResult runSyncOnDevice(const TrainConfig& config, const DataSplit& data, Communicator& comm,
                          const RunnerFactory& makeRunner, const EpochObserver& observe = {});

// --backend cuda: runSyncOnDevice with the cuBLAS runner (cublas_runner.h) on each rank's stream.
// Throws InvalidArgument when this build or machine has no cuBLAS path.
RunResult runSyncOnCublas(const TrainConfig& config, const DataSplit& data, Communicator& comm,
                          const EpochObserver& observe = {});

}  // namespace cclab::trainer::cublas
