// The one opener of input files (collectives/core/input_file.h): a regular file read whole; a missing
// file, a directory, a FIFO with no writer (which blocked open() forever), a device behind a symlink
// (`/dev/zero`, read until the machine ran out of memory), a file past its cap and a NUL byte in a
// text file refused in one line naming the file.
#include "collectives/core/input_file.h"

#include <sys/stat.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "collectives/core/errors.h"
#include "tests/support/temp_dir.h"

namespace cclab {
namespace {

using testing::TempDir;

void write(const std::filesystem::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

// The message of the InvalidArgument `read` throws, or "" when it throws none.
template <class F>
std::string refusal(F read) {
  try {
    read();
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "";
}

TEST(InputFile, ARegularFileIsReadWhole) {
  TempDir dir;
  const std::string text = "line one\nline two\n";
  write(dir.path / "a.txt", text);
  EXPECT_EQ(readInputFile((dir.path / "a.txt").string(), "log 'a.txt'"), text);
  std::filesystem::create_symlink(dir.path / "a.txt", dir.path / "link.txt");
  EXPECT_EQ(readInputFile((dir.path / "link.txt").string(), "log"), text) << "a symlink reads as what it resolves to";
}

TEST(InputFile, MissingFilesDirectoriesAndEmptyPathsAreRefusedNamingThem) {
  TempDir dir;
  EXPECT_EQ(refusal([&] { (void)readInputFile((dir.path / "none.xml").string(), "nccl topology 'none.xml'"); }),
            "nccl topology 'none.xml': no such file");
  EXPECT_EQ(refusal([&] { (void)readInputFile(dir.path.string(), "file:DIR"); }), "file:DIR: is a directory");
  EXPECT_EQ(refusal([&] { (void)readInputFile("", "log"); }), "log: an empty path");
}

TEST(InputFile, AFifoWithNoWriterIsRefusedAtOnceInsteadOfBlocking) {
  TempDir dir;
  const auto fifo = dir.path / "f.xml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto t0 = std::chrono::steady_clock::now();
  const std::string why = refusal([&] { (void)readInputFile(fifo.string(), "nccl topology 'f.xml'"); });
  EXPECT_NE(why.find("is a FIFO, not a regular file"), std::string::npos) << why;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  // The streaming opener (gzip data files) refuses it the same way.
  EXPECT_NE(refusal([&] { (void)openInputFile(fifo.string(), "data file", 1 << 20); }).find("FIFO"), std::string::npos);
}

TEST(InputFile, ADeviceBehindASymlinkIsRefusedBeforeAnyRead) {
  TempDir dir;
  std::filesystem::create_symlink("/dev/zero", dir.path / "z.xml");
  const std::string why = refusal([&] { (void)readInputFile((dir.path / "z.xml").string(), "nccl topology 'z.xml'"); });
  EXPECT_EQ(why, "nccl topology 'z.xml': is a character device, not a regular file");
}

TEST(InputFile, AFilePastItsCapIsRefusedWithItsSize) {
  TempDir dir;
  write(dir.path / "big.log", std::string(100, 'x'));
  EXPECT_EQ(refusal([&] { (void)readInputFile((dir.path / "big.log").string(), "log", 64); }),
            "log: is 100 bytes, more than 64 bytes, the most an input file can be");
  EXPECT_EQ(readInputFile((dir.path / "big.log").string(), "log", 100).size(), 100u) << "the cap itself is allowed";
}

TEST(InputFile, ANulByteInATextFileIsRefusedWithItsLineButABinaryFileKeepsIt) {
  TempDir dir;
  const char raw[] = "# nThread 1\n        68\0 52\n";
  write(dir.path / "nul.log", std::string(raw, sizeof raw - 1));
  EXPECT_EQ(refusal([&] { (void)readInputFile((dir.path / "nul.log").string(), "log"); }), "log: a NUL byte at line 2: not a text file");
  EXPECT_EQ(readInputFile((dir.path / "nul.log").string(), "weights", 1 << 20, InputContent::Binary).size(), sizeof raw - 1);
}

TEST(InputFile, ExtensionsCompareWithoutCase) {
  EXPECT_TRUE(hasExtension("a/x.xml", ".xml"));
  EXPECT_TRUE(hasExtension("x.XML", ".xml"));
  EXPECT_TRUE(hasExtension("x.Xml", ".XML"));
  EXPECT_FALSE(hasExtension(".xml", ".xml")) << "a name, then the extension";
  EXPECT_FALSE(hasExtension("x.xmlx", ".xml"));
  EXPECT_FALSE(hasExtension("x.txt", ".xml"));
}

}  // namespace
}  // namespace cclab
