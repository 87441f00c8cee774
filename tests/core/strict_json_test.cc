// Input JSON read strictly (collectives/core/strict_json.h): a key twice in one object is an error.
#include "collectives/core/strict_json.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace cclab {
namespace {

nlohmann::json parse(const std::string& text) {
  std::istringstream in(text);
  return parseStrictJson(in);
}

TEST(StrictJson, AKeyTwiceInOneObjectIsRefusedNamingIt) {
  EXPECT_EQ(parse(R"({"a":1,"b":{"a":2},"c":[{"a":3},{"a":4}]})")["c"][1]["a"], 4);  // equal keys in different objects
  try {
    (void)parse(R"({"a":1,"b":{"x":2,"x":3}})");
    ADD_FAILURE() << "a duplicate key was accepted";
  } catch (const nlohmann::json::exception& e) {
    EXPECT_NE(std::string(e.what()).find("the key \"x\" appears twice"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)parse(R"({"a":1,"a":1})"), nlohmann::json::exception);
  EXPECT_THROW((void)parse(R"({"a":1)"), nlohmann::json::parse_error);
}

}  // namespace
}  // namespace cclab
