#include "trainer/data/data_source.h"

#include "collectives/core/errors.h"

namespace cclab::trainer {

DataSplit loadData(const DataSource& source) {
  if (source.name == "fashion-mnist") return loadFashionMnist(source.dir);
  if (source.name == "synthetic") return makeSynthetic(source.synthetic);
  throw InvalidArgument("unknown dataset '" + source.name + "' (fashion-mnist, synthetic)");
}

}  // namespace cclab::trainer
