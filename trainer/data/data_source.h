// Choosing a dataset by name: "fashion-mnist" (from a directory of IDX files) or "synthetic".
#pragma once

#include <string>
#include <string_view>

#include "trainer/data/dataset.h"
#include "trainer/data/fashion_mnist.h"
#include "trainer/data/synthetic.h"

namespace cclab::trainer {

struct DataSource {
  std::string name = "fashion-mnist";
  std::string dir{kFashionMnistDir};
  SyntheticConfig synthetic;
};

// Throws InvalidArgument for an unknown name or a missing path, Error for a corrupt file.
DataSplit loadData(const DataSource& source);

}  // namespace cclab::trainer
