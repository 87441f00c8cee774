// Output files: refused up front when they cannot be written; written whole or not at all.
#include "collectives/conventions/output_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "collectives/core/errors.h"

namespace cclab::conventions {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "cclab-out-XXXXXX").string();
    path = ::mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

std::string slurp(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::size_t entries(const fs::path& dir) {
  std::size_t n = 0;
  for ([[maybe_unused]] auto& e : fs::directory_iterator(dir)) ++n;
  return n;
}

TEST(OutputFile, WritesAndReplacesWhole) {
  TempDir d;
  fs::path f = d.path / "r.json";
  writeFileAtomically(f, "first");
  EXPECT_EQ(slurp(f), "first");
  std::string big(3 << 20, 'x');
  big[12345] = 'y';
  writeFileAtomically(f, big);
  EXPECT_EQ(slurp(f), big);
  EXPECT_EQ(entries(d.path), 1u) << "no temporary file left behind";
  EXPECT_EQ(fs::status(f).permissions() & fs::perms::others_read, fs::perms::others_read);
}

TEST(OutputFile, CheckWritableCreatesNothing) {
  TempDir d;
  checkWritable(d.path / "new.json", "-J");
  EXPECT_EQ(entries(d.path), 0u);
  writeFileAtomically(d.path / "old.json", "keep");
  checkWritable(d.path / "old.json", "-J");
  EXPECT_EQ(slurp(d.path / "old.json"), "keep");
}

TEST(OutputFile, RefusesDirectoriesAndMissingParents) {
  TempDir d;
  try {
    checkWritable(d.path, "-J");
    ADD_FAILURE() << "accepted a directory";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("is a directory"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("-J"), std::string::npos) << e.what();
  }
  EXPECT_THROW(checkWritable(d.path / "no" / "such" / "dir.json", "-J"), InvalidArgument);
  EXPECT_THROW(checkWritable("", "-J"), InvalidArgument);
  EXPECT_THROW(writeFileAtomically(d.path, "x"), Error);
  EXPECT_THROW(writeFileAtomically(d.path / "no" / "f.json", "x"), Error);
}

TEST(OutputFile, FailedWriteKeepsTheOldFile) {
  if (::geteuid() == 0) GTEST_SKIP() << "root ignores directory permissions; this check needs an unprivileged user";
  TempDir d;
  fs::path f = d.path / "r.json";
  writeFileAtomically(f, "old");
  fs::permissions(d.path, fs::perms::owner_read | fs::perms::owner_exec);
  EXPECT_THROW(writeFileAtomically(f, "new"), Error);
  EXPECT_THROW(checkWritable(f, "-J"), InvalidArgument);
  fs::permissions(d.path, fs::perms::owner_all);
  EXPECT_EQ(slurp(f), "old");
}

}  // namespace
}  // namespace cclab::conventions
