#include "trainer/data/fashion_mnist.h"

#include <string>

#include "collectives/core/errors.h"
#include "trainer/data/idx_file.h"

namespace cclab::trainer {
namespace {

constexpr float kPixelMax = 255.0F;

Dataset loadPair(const std::filesystem::path& images, const std::filesystem::path& labels) {
  const IdxArray img = readIdxFile(images);
  const IdxArray lab = readIdxFile(labels);
  if (img.dims.size() != 3) throw Error("IDX file " + images.string() + " is not a 3-d image array");
  if (lab.dims.size() != 1) throw Error("IDX file " + labels.string() + " is not a 1-d label array");
  if (img.dims[0] != lab.dims[0])
    throw Error(images.string() + " has " + std::to_string(img.dims[0]) + " images but " + labels.string() + " has " +
                std::to_string(lab.dims[0]) + " labels");
  Dataset d;
  d.features = img.dims[1] * img.dims[2];
  d.classes = kFashionMnistClasses;
  d.values.resize(img.data.size());
  for (std::size_t i = 0; i < img.data.size(); ++i)
    d.values[i] = (static_cast<float>(img.data[i]) / kPixelMax - kFashionMnistMean) / kFashionMnistStd;
  d.labels = lab.data;
  for (std::uint8_t y : d.labels)
    if (y >= kFashionMnistClasses)
      throw Error("IDX file " + labels.string() + " is corrupt: label " + std::to_string(y) + " is not a class");
  return d;
}

}  // namespace

DataSplit loadFashionMnist(const std::filesystem::path& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    throw InvalidArgument("Fashion-MNIST directory " + dir.string() +
                          " does not exist (Debian package dataset-fashion-mnist, or --data-dir)");
  DataSplit s;
  s.name = "fashion-mnist";
  s.train = loadPair(dir / kTrainImagesFile, dir / kTrainLabelsFile);
  s.test = loadPair(dir / kTestImagesFile, dir / kTestLabelsFile);
  if (s.train.features != s.test.features) throw Error("Fashion-MNIST train and test images differ in size");
  return s;
}

}  // namespace cclab::trainer
