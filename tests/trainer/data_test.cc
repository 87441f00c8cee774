#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <vector>

#include "collectives/core/errors.h"
#include "trainer/data/data_source.h"
#include "trainer/data/fashion_mnist.h"
#include "trainer/data/idx_file.h"
#include "trainer/data/sampler.h"
#include "trainer/data/synthetic.h"

namespace cclab::trainer {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() : path_(fs::temp_directory_path() / ("cclab_trainer_test_" + std::to_string(::getpid()) + "_" +
                                                 std::to_string(counter_++))) {
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  [[nodiscard]] const fs::path& path() const { return path_; }

 private:
  static inline int counter_ = 0;
  fs::path path_;
};

std::vector<std::uint8_t> idxBytes(std::vector<std::uint32_t> dims, std::uint8_t fill) {
  std::vector<std::uint8_t> b{0, 0, kIdxUnsignedByte, static_cast<std::uint8_t>(dims.size())};
  std::size_t n = 1;
  for (std::uint32_t d : dims) {
    for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<std::uint8_t>(d >> s));
    n *= d;
  }
  for (std::size_t i = 0; i < n; ++i) b.push_back(static_cast<std::uint8_t>(fill + i % 7));
  return b;
}

void writeGz(const fs::path& p, const std::vector<std::uint8_t>& bytes) {
  gzFile f = gzopen(p.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())), static_cast<int>(bytes.size()));
  gzclose(f);
}

void writeRaw(const fs::path& p, const std::vector<std::uint8_t>& bytes) {
  std::ofstream out(p, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

std::vector<std::uint8_t> readRaw(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

template <class E>
std::string messageOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "<no exception>";
}

TEST(IdxFile, ReadsGzippedArray) {
  TempDir d;
  writeGz(d.path() / "a.gz", idxBytes({3, 2, 2}, 5));
  const IdxArray a = readIdxFile(d.path() / "a.gz");
  EXPECT_EQ(a.dims, (std::vector<std::int64_t>{3, 2, 2}));
  ASSERT_EQ(a.data.size(), 12U);
  EXPECT_EQ(a.data[0], 5);
  EXPECT_EQ(a.data[8], 5 + 1);
}

TEST(IdxFile, MissingFileIsInvalidArgumentNamingThePath) {
  const std::string m = messageOf<InvalidArgument>([] { readIdxFile("/nonexistent/dir/x.gz"); });
  EXPECT_NE(m.find("/nonexistent/dir/x.gz"), std::string::npos) << m;
}

TEST(IdxFile, TruncatedGzipIsAnError) {
  TempDir d;
  writeGz(d.path() / "full.gz", idxBytes({100, 28, 28}, 1));
  auto bytes = readRaw(d.path() / "full.gz");
  bytes.resize(bytes.size() / 2);
  writeRaw(d.path() / "cut.gz", bytes);
  const std::string m = messageOf<Error>([&] { readIdxFile(d.path() / "cut.gz"); });
  EXPECT_NE(m.find("cut.gz"), std::string::npos) << m;
  EXPECT_TRUE(m.find("truncated") != std::string::npos || m.find("corrupt") != std::string::npos) << m;
}

TEST(IdxFile, TruncatedPayloadIsAnError) {
  TempDir d;
  auto bytes = idxBytes({10, 4}, 0);
  bytes.resize(bytes.size() - 3);
  writeGz(d.path() / "short.gz", bytes);
  const std::string m = messageOf<Error>([&] { readIdxFile(d.path() / "short.gz"); });
  EXPECT_NE(m.find("truncated"), std::string::npos) << m;
}

TEST(IdxFile, CorruptHeaderOrGzipIsAnError) {
  TempDir d;
  auto bytes = idxBytes({4}, 0);
  bytes[0] = 0x42;
  writeGz(d.path() / "magic.gz", bytes);
  EXPECT_NE(messageOf<Error>([&] { readIdxFile(d.path() / "magic.gz"); }).find("magic"), std::string::npos);
  // A gzip header followed by garbage.
  writeRaw(d.path() / "garbage.gz", {0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0, 3, 0xde, 0xad, 0xbe, 0xef, 0x01, 0x02});
  EXPECT_NE(messageOf<Error>([&] { readIdxFile(d.path() / "garbage.gz"); }).find("garbage.gz"), std::string::npos);
}

// A small gzip whose header claims 10M images (7.8 GB) is refused before anything is inflated, and one
// whose payload inflates far past what its header claims is stopped after one chunk past the payload.
TEST(IdxFile, ClaimsAndPayloadsPastTheLimitsAreRefusedBeforeInflating) {
  TempDir d;
  auto claim = idxBytes({10, 28, 28}, 0);
  claim[4] = 0x00, claim[5] = 0x98, claim[6] = 0x96, claim[7] = 0x80;  // 10,000,000 images
  writeGz(d.path() / "claims.gz", claim);
  const std::string m = messageOf<InvalidArgument>([&] { readIdxFile(d.path() / "claims.gz"); });
  EXPECT_NE(m.find("7840000000, more than the limit of"), std::string::npos) << m;
  auto bomb = idxBytes({10, 4}, 0);
  bomb.resize(bomb.size() + (std::size_t{64} << 20), 0);  // 64 MiB of zeros after the payload, 64 KiB compressed
  writeGz(d.path() / "bomb.gz", bomb);
  const std::string b = messageOf<Error>([&] { readIdxFile(d.path() / "bomb.gz"); });
  EXPECT_NE(b.find("is corrupt: more than 1048576 bytes after the last element"), std::string::npos) << b;
  auto tail = idxBytes({10, 4}, 0);
  tail.resize(tail.size() + 5, 0);
  writeGz(d.path() / "tail.gz", tail);
  EXPECT_NE(messageOf<Error>([&] { readIdxFile(d.path() / "tail.gz"); }).find("is corrupt: 5 bytes after the last element"), std::string::npos);
}

TEST(FashionMnist, MissingDirectoryIsInvalidArgument) {
  const std::string m = messageOf<InvalidArgument>([] { loadFashionMnist("/no/such/fashion"); });
  EXPECT_NE(m.find("/no/such/fashion"), std::string::npos) << m;
}

TEST(FashionMnist, MissingFileInDirectoryNamesIt) {
  TempDir d;
  const std::string m = messageOf<InvalidArgument>([&] { loadFashionMnist(d.path()); });
  EXPECT_NE(m.find(std::string(kTrainImagesFile)), std::string::npos) << m;
}

TEST(FashionMnist, LoadsASmallDirectoryAndChecksLabels) {
  TempDir d;
  writeGz(d.path() / kTrainImagesFile, idxBytes({6, 28, 28}, 0));
  writeGz(d.path() / kTrainLabelsFile, idxBytes({6}, 0));
  writeGz(d.path() / kTestImagesFile, idxBytes({2, 28, 28}, 0));
  writeGz(d.path() / kTestLabelsFile, idxBytes({3}, 0));  // count mismatch
  EXPECT_THROW(loadFashionMnist(d.path()), Error);
  writeGz(d.path() / kTestLabelsFile, idxBytes({2}, 0));
  const DataSplit s = loadFashionMnist(d.path());
  EXPECT_EQ(s.train.size(), 6);
  EXPECT_EQ(s.train.features, 784);
  EXPECT_NEAR(s.train.values[0], (0.0F - kFashionMnistMean) / kFashionMnistStd, 1e-6);
  writeGz(d.path() / kTestLabelsFile, idxBytes({2}, 10));  // label 10 is not a class
  EXPECT_THROW(loadFashionMnist(d.path()), Error);
}

TEST(FashionMnist, InstalledPackageLoadsWhenPresent) {
  if (!fs::exists(fs::path(kFashionMnistDir) / kTrainImagesFile)) GTEST_SKIP() << "dataset-fashion-mnist not installed";
  const DataSplit s = loadFashionMnist(kFashionMnistDir);
  EXPECT_EQ(s.train.size(), 60000);
  EXPECT_EQ(s.test.size(), 10000);
  EXPECT_EQ(s.train.features, 784);
}

TEST(DataSource, UnknownNameIsRejected) {
  DataSource src;
  src.name = "cifar";
  EXPECT_THROW(loadData(src), InvalidArgument);
}

TEST(Synthetic, IsDeterministicAndLabelled) {
  SyntheticConfig c;
  c.trainSamples = 100;
  c.testSamples = 10;
  c.features = 8;
  c.classes = 3;
  const DataSplit a = makeSynthetic(c), b = makeSynthetic(c);
  EXPECT_EQ(a.train.values, b.train.values);
  EXPECT_EQ(a.train.labels, b.train.labels);
  for (auto y : a.train.labels) EXPECT_LT(y, 3);
  c.features = 0;
  EXPECT_THROW(makeSynthetic(c), InvalidArgument);
}

TEST(Sampler, ShardsAreEqualDisjointAndCoverTheEpoch) {
  for (Remainder rem : {Remainder::Pad, Remainder::Drop})
    for (int replicas : {1, 3, 4, 7}) {
      const std::int64_t n = 103;
      std::multiset<std::int64_t> seen;
      std::int64_t per = -1;
      for (int r = 0; r < replicas; ++r) {
        const DistributedSampler s(n, replicas, r, 11, rem);
        const auto idx = s.indices(2);
        if (per < 0) per = static_cast<std::int64_t>(idx.size());
        EXPECT_EQ(static_cast<std::int64_t>(idx.size()), per);
        seen.insert(idx.begin(), idx.end());
      }
      const std::set<std::int64_t> distinct(seen.begin(), seen.end());
      if (rem == Remainder::Pad) {
        EXPECT_EQ(per * replicas, (n + replicas - 1) / replicas * replicas);
        EXPECT_EQ(static_cast<std::int64_t>(distinct.size()), n);  // every sample, a few twice
      } else {
        EXPECT_EQ(per, n / replicas);
        EXPECT_EQ(distinct.size(), seen.size());  // no repeats
      }
    }
}

TEST(Sampler, ShuffleDependsOnSeedAndEpochOnly) {
  const DistributedSampler a(1000, 4, 1, 5, Remainder::Pad), b(1000, 4, 1, 5, Remainder::Pad);
  EXPECT_EQ(a.indices(3), b.indices(3));
  EXPECT_NE(a.indices(3), a.indices(4));
  const DistributedSampler c(1000, 4, 1, 6, Remainder::Pad);
  EXPECT_NE(a.indices(3), c.indices(3));
}

TEST(Sampler, ShardsInterleaveTheGlobalPermutation) {
  // Worker r's step-s batch of b samples, over all r, is the 1-worker step-s batch of N*b samples.
  const auto perm = epochPermutation(64, 9, 1);
  const int n = 4;
  for (int r = 0; r < n; ++r) {
    const auto mine = DistributedSampler(64, n, r, 9, Remainder::Pad).indices(1);
    for (std::size_t i = 0; i < mine.size(); ++i) EXPECT_EQ(mine[i], perm[i * n + static_cast<std::size_t>(r)]);
  }
}

TEST(Sampler, RejectsBadArguments) {
  EXPECT_THROW(DistributedSampler(0, 1, 0, 1, Remainder::Pad), InvalidArgument);
  EXPECT_THROW(DistributedSampler(10, 2, 2, 1, Remainder::Pad), InvalidArgument);
  EXPECT_THROW(DistributedSampler(3, 4, 0, 1, Remainder::Drop), InvalidArgument);
  EXPECT_THROW(parseRemainder("keep"), InvalidArgument);
}

}  // namespace
}  // namespace cclab::trainer
