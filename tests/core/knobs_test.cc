// The CCLAB_* knob table: strict parsing per type, checkAll naming the bad knob, docs/knobs.md equal
// to the table, and no knob read with getenv outside the table's accessors.
#include "collectives/core/knobs.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "collectives/core/errors.h"

namespace cclab::knobs {
namespace {

namespace fs = std::filesystem;

// Sets (or with nullptr unsets) an environment variable for the scope, then restores it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    if (value)
      ::setenv(name, value, 1);
    else
      ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (had_)
      ::setenv(name_.c_str(), old_.c_str(), 1);
    else
      ::unsetenv(name_.c_str());
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_, old_;
  bool had_ = false;
};

std::string refusal(const Knob& k, const char* value) {
  try {
    parse(k, value);
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return {};
}

TEST(Knobs, SwitchesTakeZeroOrOne) {
  const Knob& k = knob(Id::BindRanks);
  EXPECT_EQ(parse(k, "0"), 0);
  EXPECT_EQ(parse(k, "1"), 1);
  for (const char* bad : {"", "2", "yes", "true", " 1", "1 ", "01"}) {
    const std::string m = refusal(k, bad);
    EXPECT_NE(m.find("CCLAB_BIND_RANKS='" + std::string(bad) + "'"), std::string::npos) << bad << ": " << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
}

TEST(Knobs, IntegersAreWholeAndInRange) {
  const Knob& k = knob(Id::SpinUs);
  EXPECT_EQ(parse(k, "0"), 0);
  EXPECT_EQ(parse(k, "10000"), 10000);
  for (const char* bad : {"", "-1", "10001", "1K", "1.5", "0x10", "abc", "99999999999999999999"})
    EXPECT_NE(refusal(k, bad).find("CCLAB_SPIN_US"), std::string::npos) << bad;
  const Knob& perNode = knob(Id::RanksPerNode);
  EXPECT_EQ(parse(perNode, "4"), 4);
  EXPECT_NE(refusal(perNode, "junk").find("CCLAB_RANKS_PER_NODE='junk'"), std::string::npos);
  EXPECT_NE(refusal(perNode, "1025").find("[0, 1024]"), std::string::npos) << refusal(perNode, "1025");
}

TEST(Knobs, SizesTakeBinarySuffixes) {
  const Knob& k = knob(Id::ProcShmBytes);
  EXPECT_EQ(parse(k, "8192"), 8192);
  EXPECT_EQ(parse(k, "8K"), 8192);
  EXPECT_EQ(parse(k, "3m"), 3 << 20);
  EXPECT_EQ(parse(k, "2G"), std::int64_t{2} << 30);
  EXPECT_EQ(parse(k, "2GB"), std::int64_t{2} << 30);
  EXPECT_EQ(parse(k, "2GiB"), std::int64_t{2} << 30);
  EXPECT_EQ(parse(k, "1T"), std::int64_t{1} << 40);
  // The old strtoull read "2G" as 2 bytes and "junk" as 0.
  for (const char* bad : {"", "junk", "2X", "2 G", "1.5G", "-1G", "4K", "2T", "G", "99999999999T", "2GG"}) {
    const std::string m = refusal(k, bad);
    EXPECT_NE(m.find("CCLAB_PROC_SHM_BYTES='" + std::string(bad) + "'"), std::string::npos) << bad << ": " << m;
  }
  EXPECT_NE(refusal(k, "4K").find("[8K, 1T]"), std::string::npos) << refusal(k, "4K");
  EXPECT_EQ(parse(knob(Id::LlMaxBytes), "1K"), 1024);
  EXPECT_EQ(parse(knob(Id::LlMaxBytes), "0"), 0);
}

TEST(Knobs, ChoicesAndPaths) {
  const Knob& t = knob(Id::ProcTransport);
  EXPECT_EQ(parse(t, "shm"), 0);
  EXPECT_EQ(parse(t, "mpi"), 0);
  for (const char* bad : {"", "MPI", "sh", "shm|mpi", "tcp"})
    EXPECT_NE(refusal(t, bad).find("expected one of shm, mpi"), std::string::npos) << bad;
  EXPECT_NE(refusal(knob(Id::CudaProcStandIn), "gpu").find("CCLAB_CUDA_PROC_STANDIN"), std::string::npos);
  {
    const ScopedEnv e("CCLAB_NCCL_LIBRARY", "");
    EXPECT_EQ(text(Id::NcclLibrary), std::nullopt) << "an empty path is the default search";
  }
  const ScopedEnv e("CCLAB_NCCL_LIBRARY", "/x/libnccl.so");
  EXPECT_EQ(text(Id::NcclLibrary), "/x/libnccl.so");
}

TEST(Knobs, AccessorsReadTheEnvironmentEachTime) {
  {
    const ScopedEnv e("CCLAB_LL_MAX_BYTES", nullptr);
    EXPECT_EQ(integer(Id::LlMaxBytes), std::nullopt);
  }
  {
    const ScopedEnv e("CCLAB_LL_MAX_BYTES", "2K");
    EXPECT_EQ(integer(Id::LlMaxBytes), 2048);
  }
  {
    const ScopedEnv e("CCLAB_LL_SHARES", "0");
    EXPECT_EQ(flag(Id::LlShares), false);
  }
  {
    const ScopedEnv e("CCLAB_PROC_TRANSPORT", "mpi");
    EXPECT_EQ(text(Id::ProcTransport), "mpi");
  }
  const ScopedEnv e("CCLAB_SPIN_US", "junk");
  EXPECT_THROW((void)integer(Id::SpinUs), InvalidArgument);
  EXPECT_THROW((void)flag(Id::SpinUs), InvalidArgument) << "read as another type";
}

TEST(Knobs, CheckAllNamesTheFirstBadKnob) {
  EXPECT_NO_THROW(checkAll());
  const ScopedEnv a("CCLAB_LL_GATHER", "1");
  const ScopedEnv b("CCLAB_PROC_SHM_BYTES", "2Q");
  try {
    checkAll();
    ADD_FAILURE() << "accepted CCLAB_PROC_SHM_BYTES=2Q";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("CCLAB_PROC_SHM_BYTES='2Q': expected", 0), 0U) << e.what();
  }
}

TEST(Knobs, TheTableHasTwelveDistinctDocumentedRows) {
  EXPECT_EQ(kTable.size(), 12U);
  for (std::size_t i = 0; i < kTable.size(); ++i) {
    EXPECT_EQ(kTable[i].name.rfind("CCLAB_", 0), 0U) << kTable[i].name;
    EXPECT_FALSE(kTable[i].meaning.empty()) << kTable[i].name;
    EXPECT_FALSE(kTable[i].defaultValue.empty()) << kTable[i].name;
    EXPECT_EQ(kTable[i].meaning.find('|'), std::string_view::npos) << "a '|' would split the Markdown row";
    for (std::size_t j = 0; j < i; ++j) EXPECT_NE(kTable[i].name, kTable[j].name);
    if (kTable[i].type == Type::Integer || kTable[i].type == Type::Bytes) {
      EXPECT_LE(kTable[i].min, kTable[i].max) << kTable[i].name;
    }
  }
  const std::string help = helpText();
  for (const Knob& k : kTable) EXPECT_NE(help.find(std::string(k.name)), std::string::npos) << k.name;
}

std::string slurp(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST(Knobs, TheDocsTableIsTheDeclaration) {
  const fs::path doc = fs::path(CCLAB_SOURCE_DIR) / "docs" / "knobs.md";
  const std::string text = slurp(doc);
  ASSERT_FALSE(text.empty()) << doc;
  const std::string table = markdownTable();
  EXPECT_NE(text.find(table), std::string::npos)
      << doc.string() << " does not hold the table of collectives/core/knobs.h; replace its table with:\n" << table;
  // Every row of the doc's table is a knob of the table (no stale rows beside the generated block).
  const std::regex row(R"(^\| `(CCLAB_[A-Z_]+)` \|)");
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (!std::regex_search(line, m, row)) continue;
    bool known = false;
    for (const Knob& k : kTable) known = known || k.name == m[1].str();
    EXPECT_TRUE(known) << "docs/knobs.md lists " << m[1] << ", which collectives/core/knobs.h does not declare";
  }
}

// Knobs are read through knobs.h only: no getenv("CCLAB_...") left in the library, tools, simulator
// or trainer (tests may save and restore a knob with getenv).
TEST(Knobs, NoKnobIsReadWithGetenvOutsideTheTable) {
  const std::regex direct(R"(getenv\s*\(\s*"CCLAB_)");
  const fs::path root(CCLAB_SOURCE_DIR);
  int files = 0;
  for (const char* dir : {"collectives", "bench", "sim", "trainer"}) {
    for (const auto& e : fs::recursive_directory_iterator(root / dir)) {
      const auto ext = e.path().extension();
      if (!e.is_regular_file() || (ext != ".cc" && ext != ".h" && ext != ".cu" && ext != ".cuh")) continue;
      ++files;
      EXPECT_FALSE(std::regex_search(slurp(e.path()), direct)) << e.path() << " reads a CCLAB_* knob with getenv";
    }
  }
  EXPECT_GT(files, 50) << "the scan found the sources";
}

}  // namespace
}  // namespace cclab::knobs
