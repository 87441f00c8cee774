// readJsonFile: the one opener's refusals (input_file.h), then the strict parser.
#include "sim/json_file.h"

#include "collectives/core/errors.h"
#include "collectives/core/input_file.h"
#include "collectives/core/strict_json.h"

namespace cclab::sim {

nlohmann::json readJsonFile(const std::string& path, const std::string& what) {
  const std::string where = what + " file '" + path + "'";
  const std::string text = readInputFile(path, where);
  try {
    return parseStrictJson(std::string_view(text));
  } catch (const nlohmann::json::out_of_range& e) {  // e.g. 1e400: "number overflow parsing '1e400'"
    throw InvalidArgument(where + ": a number is out of range: " + e.what());
  } catch (const nlohmann::json::exception& e) {
    throw InvalidArgument(where + ": not valid JSON: " + e.what());
  }
}

}  // namespace cclab::sim
