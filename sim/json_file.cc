// readJsonFile: the refusals of json_file.h, then nlohmann's parser.
#include "sim/json_file.h"

#include <filesystem>
#include <fstream>

#include "collectives/conventions/strict_json.h"
#include "collectives/core/errors.h"

namespace cclab::sim {

nlohmann::json readJsonFile(const std::string& path, const std::string& what) {
  const std::string where = what + " file '" + path + "': ";
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) throw InvalidArgument(where + "cannot open it (no such file)");
  if (std::filesystem::is_directory(status)) throw InvalidArgument(where + "is a directory");
  if (!std::filesystem::is_regular_file(status)) throw InvalidArgument(where + "is not a regular file");
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) throw InvalidArgument(where + "cannot read its size: " + ec.message());
  if (size > kMaxInputFileBytes)
    throw InvalidArgument(where + "is " + std::to_string(size) + " bytes, more than an input file can be (" +
                          std::to_string(kMaxInputFileBytes) + ")");
  std::ifstream in(path);
  if (!in) throw InvalidArgument(where + "cannot open it");
  try {
    return conventions::parseStrictJson(in);
  } catch (const nlohmann::json::out_of_range& e) {  // e.g. 1e400: "number overflow parsing '1e400'"
    throw InvalidArgument(where + "a number is out of range: " + e.what());
  } catch (const nlohmann::json::exception& e) {
    throw InvalidArgument(where + "not valid JSON: " + e.what());
  }
}

}  // namespace cclab::sim
