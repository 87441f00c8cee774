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

// A file-size limit (`ulimit -f`) without SIGXFSZ ignored by the caller: the write fails like a full
// disk, one line, the old file kept, no temporary left. It used to kill the process with SIGXFSZ (exit
// 153, nothing printed) and leave ".r.json.tmp.*" behind.
TEST(OutputFile, AFileSizeLimitFailsTheWriteInsteadOfKillingTheProcess) {
  TempDir d;
  const fs::path f = d.path / "r.json";
  writeFileAtomically(f, "old");
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::signal(SIGXFSZ, SIG_DFL);  // as a tool starts
    const rlimit limit{4096, 4096};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    const std::string m = writeFailure(f, std::string(100000, 'x'));
    ::_exit(m.find("cannot write '" + f.string() + "'") != std::string::npos && m.find("too large") != std::string::npos ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_FALSE(WIFSIGNALED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the write did not fail with one line naming the file";
  EXPECT_EQ(slurp(f), "old");
  EXPECT_EQ(entries(d.path), 1U) << "no temporary file left behind";
}

// Replacing a file keeps its permission bits (it used to reset them to 0644); a new file is 0644.
TEST(OutputFile, AReplacedFileKeepsItsMode) {
  TempDir d;
  const fs::path f = d.path / "r.json";
  writeFileAtomically(f, "first");
  struct stat st {};
  ASSERT_EQ(::stat(f.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0644U);
  for (const mode_t mode : {0640U, 0600U, 0664U}) {
    ASSERT_EQ(::chmod(f.c_str(), mode), 0);
    writeFileAtomically(f, "again");
    ASSERT_EQ(::stat(f.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, mode);
    EXPECT_EQ(slurp(f), "again");
  }
  // Through a symlink: the file it resolves to keeps its mode, the link stays.
  const fs::path link = d.path / "link.json";
  fs::create_symlink(f, link);
  writeFileAtomically(link, "linked");
  ASSERT_EQ(::stat(f.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0664U);
  EXPECT_TRUE(fs::is_symlink(link));
}

// The streamed writer: pieces make the file; abandoned before commit() it leaves the old file alone.
TEST(OutputFile, AStreamedFileIsWholeOrNotWritten) {
  TempDir d;
  const fs::path f = d.path / "t.json";
  {
    AtomicFileWriter w(f);
    w.write("{\"a\":");
    w.write("1}");
    w.commit();
    EXPECT_THROW(w.write("more"), Error);
  }
  EXPECT_EQ(slurp(f), "{\"a\":1}");
  {
    AtomicFileWriter w(f);
    w.write("half");
  }  // an exception on the way: no commit
  EXPECT_EQ(slurp(f), "{\"a\":1}");
  EXPECT_EQ(entries(d.path), 1U) << "no temporary file left behind";
}

std::string overlap(std::initializer_list<NamedOutput> outputs) {
  try {
    checkDistinctOutputs(outputs);
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return {};
}

// Two outputs of one command naming one file are refused, however the file is named (the trainer
// compared -J and --trace as strings only; cclab-sim not at all: one output replaced the other).
TEST(OutputFile, OutputsNamingOneFileAreRefused) {
  TempDir d;
  const fs::path a = d.path / "a.json", b = d.path / "b.json";
  EXPECT_EQ(overlap({{"-J", a}, {"--trace", b}, {"-o", ""}, {"--save-weights", ""}}), "");
  const std::string same = overlap({{"-J", a}, {"--trace", a}});
  EXPECT_EQ(same, "-J '" + a.string() + "' and --trace '" + a.string() + "' name the same file; give each output its own path");
  fs::create_directory(d.path / "sub");
  EXPECT_NE(overlap({{"-o", a}, {"-J", d.path / "sub" / ".." / "." / "a.json"}}), "") << "another spelling, not yet a file";
  writeFileAtomically(a, "x");
  fs::create_symlink(a, d.path / "link.json");
  fs::create_hard_link(a, d.path / "hard.json");
  fs::create_directory_symlink(d.path, d.path / "dirlink");
  for (const fs::path& other : {d.path / "link.json", d.path / "hard.json", d.path / "dirlink" / "a.json"})
    EXPECT_NE(overlap({{"-J", a}, {"--trace", other}}), "") << other;
  EXPECT_NE(overlap({{"-J", b}, {"-o", d.path / "dirlink" / "b.json"}}), "") << "a new file through a symlinked directory";
  const std::string third = overlap({{"-J", b}, {"--trace", a}, {"--save-weights", d.path / "hard.json"}});
  EXPECT_NE(third.find("--trace '" + a.string() + "' and --save-weights"), std::string::npos) << third;
  // Relative spellings of one new file.
  const fs::path cwd = fs::current_path();
  fs::current_path(d.path);
  const std::string relative = overlap({{"-J", "new.json"}, {"--trace", "./new.json"}});
  fs::current_path(cwd);
  EXPECT_NE(relative, "");
}

}  // namespace
}  // namespace cclab::conventions
