#include "trainer/report/weights_file.h"

#include <string_view>

#include "collectives/conventions/output_file.h"
#include "collectives/conventions/limits.h"
#include "collectives/core/errors.h"
#include "collectives/core/input_file.h"

namespace cclab::trainer {

void writeWeights(const std::filesystem::path& path, std::span<const float> params) {
  const auto bytes = std::as_bytes(params);
  conventions::writeFileAtomically(path, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

std::vector<float> readWeights(const std::filesystem::path& path) {
  // At most the largest model's parameters (conventions::kMaxModelParameters floats).
  const std::string bytes = readInputFile(path.string(), "weights '" + path.string() + "'",
                                          static_cast<std::uint64_t>(conventions::kMaxModelParameters) * sizeof(float), InputContent::Binary);
  if (bytes.size() % sizeof(float) != 0)
    throw Error("weights '" + path.string() + "': " + std::to_string(bytes.size()) + " bytes is not a whole number of floats");
  std::vector<float> params(bytes.size() / sizeof(float));
  std::copy(bytes.begin(), bytes.end(), reinterpret_cast<char*>(params.data()));
  return params;
}

}  // namespace cclab::trainer
