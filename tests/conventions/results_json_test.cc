// conventions::resultsJson and writeJsonFile: the shared keys, busbw always present, files written whole.
#include "collectives/conventions/results_json.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "collectives/conventions/output_file.h"
#include "collectives/core/errors.h"

namespace cclab::conventions {
namespace {

ResultLog sampleLog() {
  ResultLog log;
  log.add({8, 2, "float", "sum", -1, {5.0, 0.1, 0.2, 0}, {4.0, 0.3, 0.4, std::nullopt}});
  log.add({1024, 256, "float", "sum", -1, {9.0, 1.0, 2.0, 1}, {8.0, 3.0, 4.0, 0}});
  return log;
}

TEST(ResultsJson, SharedKeysAndRows) {
  const nlohmann::json j = resultsJson({"allreduce", "host", "ring", 4, "float", "sum"}, sampleLog());
  EXPECT_EQ(j["collective"], "allreduce");
  EXPECT_EQ(j["backend"], "host");
  EXPECT_EQ(j["algo"], "ring");
  EXPECT_EQ(j["nranks"], 4);
  EXPECT_EQ(j["op"], "sum");
  ASSERT_EQ(j["results"].size(), 2U);
  EXPECT_EQ(j["results"][1]["size"], 1024);
  EXPECT_EQ(j["results"][1]["count"], 256);
  EXPECT_DOUBLE_EQ(j["results"][1]["oop"]["busbw"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(j["results"][1]["ip"]["time_us"].get<double>(), 8.0);
  EXPECT_EQ(j["results"][1]["oop"]["wrong"], 1);
  EXPECT_TRUE(j["results"][0]["ip"]["wrong"].is_null());
  EXPECT_DOUBLE_EQ(j["avg_busbw"].get<double>(), (0.2 + 0.4 + 2.0 + 4.0) / 4);
}

TEST(ResultsJson, NonFiniteNumbersBecomeNull) {
  ResultLog log;
  log.add({8, 2, "float", "sum", -1, {INFINITY, 0, NAN, 0}, {}});
  const nlohmann::json j = nlohmann::json::parse(resultsJson({"allreduce", "sim", "ring", 2, "float", "sum"}, log).dump());
  EXPECT_TRUE(j["results"][0]["oop"]["time_us"].is_null());
  EXPECT_TRUE(j["results"][0]["oop"]["busbw"].is_null());
}

TEST(ResultsJson, WrittenWholeAndReadBack) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("cclab-json-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = dir / "r.json";
  { std::ofstream(path) << "old"; }
  checkWritable(path, "-J");
  EXPECT_EQ(std::filesystem::file_size(path), 3U) << "checking must not truncate";
  const nlohmann::json doc = resultsJson({"reduce", "host", "tree", 3, "float", "max"}, sampleLog());
  writeJsonFile(path, doc);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(nlohmann::json::parse(text.str()), doc);
  EXPECT_EQ(text.str().back(), '\n');
  EXPECT_THROW(writeJsonFile(dir, doc), Error);  // a directory: refused, nothing replaced
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), {}), 1) << "no temporary file left";
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace cclab::conventions
