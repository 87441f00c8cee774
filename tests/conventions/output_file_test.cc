// Output files: refused up front when they cannot be written; written whole or not at all.
#include "collectives/conventions/output_file.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "collectives/core/errors.h"
#include "tests/support/temp_dir.h"

namespace cclab::conventions {
namespace {

namespace fs = std::filesystem;

using cclab::testing::entries;
using cclab::testing::slurp;

struct TempDir : cclab::testing::TempDir {
  TempDir() : cclab::testing::TempDir("cclab-out") {}
};

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

std::string refusal(const fs::path& p) {
  try {
    checkWritable(p, "-J");
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return {};
}

std::string writeFailure(const fs::path& p, std::string_view content) {
  try {
    writeFileAtomically(p, content);
  } catch (const Error& e) {
    return e.what();
  }
  return {};
}

// A target that exists and is not a regular file is refused before and at the write, and left as it
// was: renaming over /dev/full (as root) used to replace the device with a JSON file.
TEST(OutputFile, RefusesFifosAndDevicesLeavingThemUntouched) {
  TempDir d;
  const fs::path fifo = d.path / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  EXPECT_NE(refusal(fifo).find("is a FIFO, not a regular file"), std::string::npos) << refusal(fifo);
  EXPECT_NE(writeFailure(fifo, "x").find("is a FIFO"), std::string::npos) << writeFailure(fifo, "x");
  EXPECT_TRUE(fs::is_fifo(fs::symlink_status(fifo)));
  // Copies of /dev/null (1, 3) and /dev/full (1, 7) made in the temporary directory, never the real /dev.
  int devices = 0;
  for (const auto& [name, minor] : {std::pair{"null", 3U}, std::pair{"full", 7U}}) {
    const fs::path dev = d.path / name;
    if (::mknod(dev.c_str(), S_IFCHR | 0666, makedev(1, minor)) != 0) continue;  // no CAP_MKNOD here
    ++devices;
    const std::string m = refusal(dev);
    EXPECT_NE(m.find("is a character device, not a regular file"), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    EXPECT_NE(writeFailure(dev, "{}").find("character device"), std::string::npos) << name;
    struct stat st {};
    ASSERT_EQ(::lstat(dev.c_str(), &st), 0);
    EXPECT_TRUE(S_ISCHR(st.st_mode)) << name << " was replaced";
    EXPECT_EQ(minor(st.st_rdev), minor) << name;
  }
  if (devices == 0) std::cout << "(device nodes not tested: mknod refused here)\n";
  EXPECT_EQ(entries(d.path), static_cast<std::size_t>(1 + devices)) << "no temporary file left behind";
}

// A symlink is written through: the file it resolves to is replaced, the link stays a link. A link to
// something that is not a regular file, or to nothing, is refused.
TEST(OutputFile, SymlinksAreWrittenThrough) {
  TempDir d;
  fs::create_directory(d.path / "real");
  const fs::path real = d.path / "real" / "r.json", link = d.path / "link.json";
  writeFileAtomically(real, "old");
  fs::create_symlink(real, link);
  checkWritable(link, "-J");
  writeFileAtomically(link, "new");
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(slurp(real), "new");
  EXPECT_EQ(entries(d.path / "real"), 1U);
  const fs::path fifo = d.path / "fifo", toFifo = d.path / "to-fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  fs::create_symlink(fifo, toFifo);
  EXPECT_NE(refusal(toFifo).find("is a FIFO"), std::string::npos) << refusal(toFifo);
  EXPECT_NE(writeFailure(toFifo, "x").find("is a FIFO"), std::string::npos);
  EXPECT_TRUE(fs::is_symlink(toFifo));
  const fs::path dangling = d.path / "dangling";
  fs::create_symlink(d.path / "missing", dangling);
  EXPECT_NE(refusal(dangling).find("a symlink to a missing file"), std::string::npos) << refusal(dangling);
  EXPECT_FALSE(writeFailure(dangling, "x").empty());
  EXPECT_FALSE(fs::exists(d.path / "missing"));
}

// A full disk: the write fails part-way (here RLIMIT_FSIZE makes write() fail with EFBIG, as ENOSPC
// would), the old file is kept and no temporary file is left. In a child, so the limit stays there.
TEST(OutputFile, AFailedWriteOnAFullDiskKeepsTheOldFile) {
  TempDir d;
  const fs::path f = d.path / "r.json";
  writeFileAtomically(f, "old");
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{4096, 4096};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    const std::string m = writeFailure(f, std::string(100000, 'x'));
    ::_exit(m.find("cannot write '" + f.string() + "'") != std::string::npos ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the write did not fail with one line naming the file";
  EXPECT_EQ(slurp(f), "old");
  EXPECT_EQ(entries(d.path), 1U) << "no temporary file left behind";
}

}  // namespace
}  // namespace cclab::conventions
