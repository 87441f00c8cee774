#include "trainer/run/trainer.h"

#include "collectives/communicator.h"
#include "trainer/async/async_trainer.h"
#include "trainer/cublas/device_sync.h"
#include "trainer/sync/sync_trainer.h"

namespace cclab::trainer {

RunResult train(const TrainConfig& config, const DataSplit& data, const EpochObserver& observe) {
  validate(config);
  if (config.mode == Mode::Async) return runAsync(config, data, observe);
  const auto comm = makeCommunicator(config.sync.backend, CommConfig{.nranks = config.workers});
  if (config.sync.backend == Backend::Cuda) return cublas::runSyncOnCublas(config, data, *comm, observe);  // model on the device
  return runSync(config, data, *comm, observe);
}

}  // namespace cclab::trainer
