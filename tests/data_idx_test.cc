// IDX files (training/data/idx.h): files written here, plain and gzipped, read back; truncated,
// lying and corrupt files refused with an error naming the file; IdxDataset's normalisation; and
// the real Fashion-MNIST files of Debian's dataset-fashion-mnist when installed.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <zlib.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/support/temp_dir.h"
#include "training/data/idx.h"

namespace ucudnn::data {
namespace {

using ucudnn_test::TempDir;

std::string idx_header(uint8_t rank, const std::vector<uint32_t>& dims, uint8_t type = 0x08) {
  std::string bytes = {0, 0, static_cast<char>(type), static_cast<char>(rank)};
  for (uint32_t d : dims)
    for (int shift = 24; shift >= 0; shift -= 8) bytes.push_back(static_cast<char>((d >> shift) & 0xFF));
  return bytes;
}

void write_plain(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

void write_gzip(const std::string& path, const std::string& bytes) {
  gzFile file = gzopen(path.c_str(), "wb");
  ASSERT_NE(file, nullptr);
  ASSERT_EQ(gzwrite(file, bytes.data(), static_cast<unsigned>(bytes.size())), static_cast<int>(bytes.size()));
  ASSERT_EQ(gzclose(file), Z_OK);
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Three 4 x 5 images with pixel value (31·i + 7·k) mod 256 and labels 2, 0, 1.
struct Fixture {
  std::string images = idx_header(3, {3, 4, 5});
  std::string labels = idx_header(1, {3}) + std::string{2, 0, 1};
  Fixture() {
    for (int i = 0; i < 3; ++i)
      for (int k = 0; k < 20; ++k) images.push_back(static_cast<char>((31 * i + 7 * k) % 256));
  }
};

void expect_error(const Status& status, const std::string& path, const std::string& what) {
  ASSERT_FALSE(status.is_ok()) << "expected an error about '" << what << "' for " << path;
  EXPECT_NE(status.message().find(path), std::string::npos) << status.to_string();
  EXPECT_NE(status.message().find(what), std::string::npos) << status.to_string();
}

TEST(DataIdx, PlainAndGzipReadBackTheSameValues) {
  TempDir dir("data_idx");
  Fixture fixture;
  write_plain(dir.file("images"), fixture.images);
  write_plain(dir.file("labels"), fixture.labels);
  write_gzip(dir.file("images.gz"), fixture.images);
  write_gzip(dir.file("labels.gz"), fixture.labels);
  for (const std::string suffix : {"", ".gz"}) {
    SCOPED_TRACE("suffix '" + suffix + "'");
    auto images = read_idx_images(dir.file("images" + suffix));
    ASSERT_TRUE(images.has_value()) << images.status().to_string();
    EXPECT_EQ(images->count, 3);
    EXPECT_EQ(images->rows, 4);
    EXPECT_EQ(images->cols, 5);
    EXPECT_EQ(std::string(images->pixels.begin(), images->pixels.end()), fixture.images.substr(16));
    auto labels = read_idx_labels(dir.file("labels" + suffix));
    ASSERT_TRUE(labels.has_value()) << labels.status().to_string();
    EXPECT_EQ(*labels, (std::vector<uint8_t>{2, 0, 1}));
  }
}

TEST(DataIdx, DatasetNormalisesAsToTensorThenNormalize) {
  TempDir dir("data_idx");
  Fixture fixture;
  write_gzip(dir.file("images.gz"), fixture.images);
  write_plain(dir.file("labels"), fixture.labels);
  auto set = IdxDataset::open(dir.file("images.gz"), dir.file("labels"), {.mean = 0.5f, .std = 0.25f});
  ASSERT_TRUE(set.has_value()) << set.status().to_string();
  EXPECT_EQ((*set)->size(), 3);
  EXPECT_EQ((*set)->image_shape(), (Shape{1, 4, 5}));
  EXPECT_EQ((*set)->num_classes(), 3);
  std::vector<float> image(20);
  int64_t label = -1;
  ASSERT_TRUE((*set)->load(1, 0, image.data(), &label).is_ok());
  EXPECT_EQ(label, 0);
  for (int k = 0; k < 20; ++k) {
    const double pixel = (31 * 1 + 7 * k) % 256;
    EXPECT_NEAR(image[k], (pixel / 255.0 - 0.5) / 0.25, 1e-6) << "pixel " << k;
  }
  EXPECT_FALSE((*set)->load(3, 0, image.data(), &label).is_ok());
  EXPECT_FALSE((*set)->load(-1, 0, image.data(), &label).is_ok());
}

TEST(DataIdx, TruncatedFilesAreRefused) {
  TempDir dir("data_idx");
  Fixture fixture;
  // Every length short of the whole file, plain and gzipped: the header or the data is cut.
  for (size_t length = 0; length < fixture.images.size(); ++length) {
    SCOPED_TRACE("length " + std::to_string(length));
    const std::string plain = dir.file("cut"), gz = dir.file("cut.gz");
    write_plain(plain, fixture.images.substr(0, length));
    write_gzip(gz, fixture.images.substr(0, length));
    const char* what = length < 4 ? "too short" : length < 16 ? "ends inside its header" : "is truncated";
    expect_error(read_idx_images(plain).status(), plain, what);
    expect_error(read_idx_images(gz).status(), gz, what);
  }
  // The compressed stream itself cut short: zlib's "unexpected end of file".
  const std::string whole = dir.file("whole.gz"), cut = dir.file("cut_stream.gz");
  write_gzip(whole, fixture.images);
  const std::string compressed = read_all(whole);
  for (size_t length = 10; length < compressed.size(); ++length) {
    write_plain(cut, compressed.substr(0, length));
    EXPECT_FALSE(read_idx_images(cut).has_value()) << "compressed stream cut at " << length;
  }
}

TEST(DataIdx, HeadersThatDisagreeWithTheDataAreRefused) {
  TempDir dir("data_idx");
  Fixture fixture;
  const std::string data = fixture.images.substr(16);
  const std::string path = dir.file("images");
  write_plain(path, idx_header(3, {4, 4, 5}) + data);  // claims one image more
  expect_error(read_idx_images(path).status(), path, "is truncated");
  write_plain(path, idx_header(3, {2, 4, 5}) + data);  // claims one image fewer
  expect_error(read_idx_images(path).status(), path, "more data than its header declares");
  write_plain(path, idx_header(3, {0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF}) + data);  // beyond any size
  expect_error(read_idx_images(path).status(), path, "more than the 2^40 bytes");
  write_plain(path, idx_header(3, {3, 0, 5}));
  expect_error(read_idx_images(path).status(), path, "0 x 5 pixels");
  write_plain(path, fixture.labels);  // a label file where images are expected
  expect_error(read_idx_images(path).status(), path, "0x00000801");
  write_plain(path, idx_header(3, {3, 4, 5}, 0x0D) + data);  // float32 values
  const Status status = read_idx_images(path).status();
  expect_error(status, path, "type 0x0000000d");
  EXPECT_EQ(status.code(), StatusCode::kUnsupported);
  write_plain(path, "PK\x03\x04 not an idx file");
  expect_error(read_idx_images(path).status(), path, "is not an IDX file");
}

TEST(DataIdx, CorruptGzipAndMissingFilesAreRefused) {
  TempDir dir("data_idx");
  Fixture fixture;
  const std::string path = dir.file("images.gz");
  write_gzip(path, fixture.images);
  std::string bytes = read_all(path);
  bytes[bytes.size() - 6] ^= 0x5A;  // inside the CRC-32 trailer
  write_plain(path, bytes);
  expect_error(read_idx_images(path).status(), path, "not a valid gzip stream");

  const Status missing = read_idx_images(dir.file("absent")).status();
  EXPECT_EQ(missing.code(), StatusCode::kNotFound);
  expect_error(missing, dir.file("absent"), "does not exist");
  expect_error(read_idx_labels(dir.path().string()).status(), dir.path().string(), "not a regular file");
}

TEST(DataIdx, DatasetRefusesCountsThatDisagree) {
  TempDir dir("data_idx");
  Fixture fixture;
  write_plain(dir.file("images"), fixture.images);
  write_plain(dir.file("labels"), idx_header(1, {2}) + std::string{1, 1});
  expect_error(IdxDataset::open(dir.file("images"), dir.file("labels")).status(), dir.file("labels"), "2 labels");
  write_plain(dir.file("labels"), fixture.labels);
  EXPECT_FALSE(IdxDataset::open(dir.file("images"), dir.file("labels"), {.mean = 0, .std = 0}).has_value());
}

TEST(DataIdx, ReadingNeverWrites) {
  TempDir dir("data_idx");
  Fixture fixture;
  write_gzip(dir.file("images.gz"), fixture.images);
  write_plain(dir.file("labels"), fixture.labels);
  const std::string images_before = read_all(dir.file("images.gz")), labels_before = read_all(dir.file("labels"));
  struct stat before, after;
  ASSERT_EQ(::stat(dir.file("images.gz").c_str(), &before), 0);
  auto set = IdxDataset::open(dir.file("images.gz"), dir.file("labels"));
  ASSERT_TRUE(set.has_value()) << set.status().to_string();
  ASSERT_EQ(::stat(dir.file("images.gz").c_str(), &after), 0);
  EXPECT_EQ(before.st_mtim.tv_sec, after.st_mtim.tv_sec);
  EXPECT_EQ(before.st_mtim.tv_nsec, after.st_mtim.tv_nsec);
  EXPECT_EQ(read_all(dir.file("images.gz")), images_before);
  EXPECT_EQ(read_all(dir.file("labels")), labels_before);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), std::filesystem::directory_iterator()), 2);
}

// The real data set (Debian package dataset-fashion-mnist, gzipped files in kFashionMnistDir).
TEST(DataIdx, FashionMnistWhenInstalled) {
  struct stat st;
  if (::stat((std::string(kFashionMnistDir) + "/train-images-idx3-ubyte.gz").c_str(), &st) != 0)
    GTEST_SKIP() << "Fashion-MNIST is not installed in " << kFashionMnistDir
                 << " (apt-get install dataset-fashion-mnist, or scripts/install-deps)";
  for (const auto& [split, count] : {std::pair{Split::kTrain, 60000}, std::pair{Split::kVal, 10000}}) {
    SCOPED_TRACE(split_name(split));
    auto set = IdxDataset::open_dir(kFashionMnistDir, split);
    ASSERT_TRUE(set.has_value()) << set.status().to_string();
    EXPECT_EQ((*set)->size(), count);
    EXPECT_EQ((*set)->image_shape(), (Shape{1, 28, 28}));
    EXPECT_EQ((*set)->num_classes(), 10);
    std::vector<int64_t> per_class(10, 0);
    for (uint8_t label : (*set)->labels()) {
      ASSERT_LT(label, 10);
      ++per_class[label];
    }
    EXPECT_EQ(per_class, std::vector<int64_t>(10, count / 10));  // the set is balanced
    EXPECT_EQ((*set)->labels()[0], 9);                          // both splits open with an ankle boot
  }
  // The normalisation constants are the training set's pixel mean and std.
  auto train = IdxDataset::open_dir(kFashionMnistDir, Split::kTrain);
  ASSERT_TRUE(train.has_value());
  double sum = 0, squares = 0;
  for (uint8_t p : (*train)->images().pixels) {
    sum += p / 255.0;
    squares += (p / 255.0) * (p / 255.0);
  }
  const double n = static_cast<double>((*train)->images().pixels.size());
  EXPECT_NEAR(sum / n, kFashionMnistMean, 5e-5);
  EXPECT_NEAR(std::sqrt(squares / n - (sum / n) * (sum / n)), kFashionMnistStd, 5e-5);
}

}  // namespace
}  // namespace ucudnn::data
