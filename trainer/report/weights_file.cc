#include "trainer/report/weights_file.h"

#include <fstream>
#include <iterator>
#include <string_view>

#include "collectives/conventions/output_file.h"
#include "collectives/core/errors.h"

namespace cclab::trainer {

void writeWeights(const std::filesystem::path& path, std::span<const float> params) {
  const auto bytes = std::as_bytes(params);
  conventions::writeFileAtomically(path, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

std::vector<float> readWeights(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read weights '" + path.string() + "'");
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() % sizeof(float) != 0)
    throw Error("weights '" + path.string() + "': " + std::to_string(bytes.size()) + " bytes is not a whole number of floats");
  std::vector<float> params(bytes.size() / sizeof(float));
  std::copy(bytes.begin(), bytes.end(), reinterpret_cast<char*>(params.data()));
  return params;
}

}  // namespace cclab::trainer
