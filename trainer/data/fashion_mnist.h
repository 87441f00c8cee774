// Fashion-MNIST from Debian's dataset-fashion-mnist: 60000 training and 10000 test images of 28x28
// grey pixels in 10 classes, as gzipped IDX files.
#pragma once

#include <filesystem>
#include <string_view>

#include "trainer/data/dataset.h"

namespace cclab::trainer {

inline constexpr std::string_view kFashionMnistDir = "/usr/share/datasets/fashion-mnist";
inline constexpr std::string_view kTrainImagesFile = "train-images-idx3-ubyte.gz";
inline constexpr std::string_view kTrainLabelsFile = "train-labels-idx1-ubyte.gz";
inline constexpr std::string_view kTestImagesFile = "t10k-images-idx3-ubyte.gz";
inline constexpr std::string_view kTestLabelsFile = "t10k-labels-idx1-ubyte.gz";
inline constexpr int kFashionMnistClasses = 10;
// Pixels are scaled to [0, 1], then standardised with the training set's mean and standard deviation
// (computed over all 60000 x 784 training pixels; the values commonly quoted for Fashion-MNIST).
inline constexpr float kFashionMnistMean = 0.2860F;
inline constexpr float kFashionMnistStd = 0.3530F;

// Throws InvalidArgument (missing directory or file) or Error (truncated, corrupt, inconsistent).
DataSplit loadFashionMnist(const std::filesystem::path& dir);

}  // namespace cclab::trainer
