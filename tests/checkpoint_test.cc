// Checkpoint files (training/checkpoint.h): a round trip keeps every field bit for bit; a save
// replaces the old file whole; and every way a file can be wrong — truncated anywhere, wrong magic,
// a newer version, sizes that lie, a tensor count beyond the file, a flipped byte — is an error
// naming the file and the problem, without reading past the file or allocating what it claims.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "tests/support/temp_dir.h"
#include "training/checkpoint.h"

namespace ucudnn_test {
namespace {

namespace training = ucudnn::training;
using ucudnn::StatusCode;
using ucudnn::Tensor;

training::Checkpoint sample() {
  training::Checkpoint c;
  c.tensors["conv1.weight"] = Tensor::from_floats({2, 1, 2, 2}, std::vector<float>{1, -2, 3.5f, 4, 5, 6, -7, 8e-9f});
  c.tensors["conv1.weight.exp_avg"] = Tensor::from_floats({2, 1, 2, 2}, std::vector<float>(8, 0.25f));
  c.tensors["bn.running_var"] = Tensor::from_floats({3}, std::vector<float>{1, 2, 3});
  c.tensors["bn.num_batches"] = Tensor::from_int64s({1}, std::vector<int64_t>{int64_t{1} << 40});
  c.tensors["scalar"] = Tensor::from_floats({}, std::vector<float>{42});
  c.tensors["empty"] = Tensor::from_floats({0, 3}, std::vector<float>{});
  c.step = 1234;
  c.epoch = 7;
  c.rng_state = {0x0123456789abcdefull, 42, ~0ull};
  c.graph_fingerprint = "training graph sha: 9f2c";
  c.optimizer_config = "adamw,beta1=0.9,beta2=0.999";
  return c;
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

void expect_same(const training::Checkpoint& got, const training::Checkpoint& want) {
  EXPECT_EQ(got.step, want.step);
  EXPECT_EQ(got.epoch, want.epoch);
  EXPECT_EQ(got.rng_state, want.rng_state);
  EXPECT_EQ(got.graph_fingerprint, want.graph_fingerprint);
  EXPECT_EQ(got.optimizer_config, want.optimizer_config);
  ASSERT_EQ(got.tensors.size(), want.tensors.size());
  for (const auto& [name, tensor] : want.tensors) {
    ASSERT_EQ(got.tensors.count(name), 1u) << name;
    const Tensor& t = got.tensors.at(name);
    EXPECT_EQ(t.dtype(), tensor.dtype()) << name;
    EXPECT_EQ(t.shape(), tensor.shape()) << name;
    ASSERT_EQ(t.nbytes(), tensor.nbytes()) << name;
    if (t.nbytes() != 0) {
      EXPECT_EQ(std::memcmp(t.raw(), tensor.raw(), t.nbytes()), 0) << name;
    }
  }
}

// The load fails with InvalidArgument, naming the file and containing `phrase`.
void expect_corrupt(const std::string& path, const std::string& phrase) {
  auto loaded = training::load_checkpoint(path);
  ASSERT_FALSE(loaded.has_value()) << "a damaged checkpoint loaded; expected '" << phrase << "'";
  EXPECT_EQ(loaded.status().code(), StatusCode::kInvalidArgument) << loaded.status().to_string();
  EXPECT_NE(loaded.status().message().find("checkpoint '" + path + "'"), std::string::npos)
      << loaded.status().message();
  EXPECT_NE(loaded.status().message().find(phrase), std::string::npos) << loaded.status().message();
}

// Byte offsets in sample()'s file (format in checkpoint.h).
constexpr size_t kVersionOffset = 8, kSizeOffset = 12, kRngCountOffset = 36;
size_t tensor_count_offset(const training::Checkpoint& c) {
  return kRngCountOffset + 4 + 8 * c.rng_state.size() + 4 + c.graph_fingerprint.size() + 4 +
         c.optimizer_config.size();
}

template <typename T> void put(std::string& bytes, size_t offset, T value) {
  std::memcpy(bytes.data() + offset, &value, sizeof value);
}

class CheckpointFile : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(training::save_checkpoint(path_, sample()).is_ok());
    bytes_ = read_bytes(path_);
  }
  TempDir dir_{"checkpoint_test"};
  std::string path_ = dir_.file("run.ckpt");
  std::string bytes_;
};

TEST_F(CheckpointFile, RoundTripKeepsEverything) {
  auto loaded = training::load_checkpoint(path_);
  ASSERT_TRUE(loaded.has_value()) << loaded.status().to_string();
  expect_same(*loaded, sample());
  EXPECT_EQ(read_bytes(path_), bytes_) << "loading must not write";
}

TEST_F(CheckpointFile, SaveReplacesTheOldFileAndLeavesNoTemporary) {
  training::Checkpoint next = sample();
  next.step = 2000;
  next.tensors.erase("empty");
  ASSERT_TRUE(training::save_checkpoint(path_, next).is_ok());
  auto loaded = training::load_checkpoint(path_);
  ASSERT_TRUE(loaded.has_value()) << loaded.status().to_string();
  expect_same(*loaded, next);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir_.path()), {}), 1) << "a temporary file was left";
}

TEST_F(CheckpointFile, SaveIntoAMissingFolderFailsCleanly) {
  const std::string path = dir_.file("missing/run.ckpt");
  const ucudnn::Status status = training::save_checkpoint(path, sample());
  EXPECT_EQ(status.code(), StatusCode::kIoError) << status.to_string();
  EXPECT_NE(status.message().find(path), std::string::npos) << status.message();
}

TEST_F(CheckpointFile, RefusesTensorsItCannotHold) {
  training::Checkpoint c;
  c.tensors["w"] = std::move(Tensor::allocate(ucudnn::DType::kInt32, {2})).value();
  const ucudnn::Status status = training::save_checkpoint(dir_.file("bad.ckpt"), c);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.to_string();
  EXPECT_NE(status.message().find("float32 and int64 tensors only"), std::string::npos) << status.message();
  EXPECT_FALSE(std::filesystem::exists(dir_.file("bad.ckpt")));
}

TEST_F(CheckpointFile, MissingFileIsNotFound) {
  EXPECT_EQ(training::load_checkpoint(dir_.file("none.ckpt")).status().code(), StatusCode::kNotFound);
}

TEST_F(CheckpointFile, TruncatedAnywhereIsRefused) {
  for (size_t length : {size_t{0}, size_t{5}, size_t{20}, bytes_.size() / 2, bytes_.size() - 1}) {
    write_bytes(path_, bytes_.substr(0, length));
    auto loaded = training::load_checkpoint(path_);
    ASSERT_FALSE(loaded.has_value()) << "truncated to " << length << " bytes";
    EXPECT_EQ(loaded.status().code(), StatusCode::kInvalidArgument) << loaded.status().to_string();
    EXPECT_NE(loaded.status().message().find("truncated"), std::string::npos) << loaded.status().message();
  }
}

TEST_F(CheckpointFile, WrongMagicIsRefused) {
  bytes_[0] = 'X';
  write_bytes(path_, bytes_);
  expect_corrupt(path_, "not a ucudnn checkpoint (wrong magic number)");
  write_bytes(path_, "PK\x03\x04 this is a zip file, not a checkpoint");
  expect_corrupt(path_, "wrong magic number");
}

TEST_F(CheckpointFile, NewerVersionIsUnsupported) {
  put<uint32_t>(bytes_, kVersionOffset, 2);
  write_bytes(path_, bytes_);
  auto loaded = training::load_checkpoint(path_);
  ASSERT_FALSE(loaded.has_value());
  EXPECT_EQ(loaded.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(loaded.status().message().find("format version 2; this build reads version 1"), std::string::npos)
      << loaded.status().message();
}

TEST_F(CheckpointFile, LyingSizesAreRefusedBeforeAllocating) {
  const std::string original = bytes_;
  put<uint64_t>(bytes_, kSizeOffset, uint64_t{1} << 50);  // the header's file size
  write_bytes(path_, bytes_);
  expect_corrupt(path_, "bytes but the file has " + std::to_string(original.size()) + " (truncated)");

  bytes_ = original;  // an RNG state of 2^32 - 1 values
  put<uint32_t>(bytes_, kRngCountOffset, UINT32_MAX);
  write_bytes(path_, bytes_);
  expect_corrupt(path_, "the RNG state claims 4294967295 values");

  bytes_ = original;  // the first tensor's name claims 4 GiB
  const size_t name_offset = tensor_count_offset(sample()) + 4;
  put<uint32_t>(bytes_, name_offset, UINT32_MAX);
  write_bytes(path_, bytes_);
  expect_corrupt(path_, "tensor 0 of 6's name claims 4294967295 bytes");

  bytes_ = original;  // the first tensor ("bn.num_batches", rank 1) claims 2^60 elements
  const size_t dims_offset = name_offset + 4 + std::string("bn.num_batches").size() + 4 + 4;
  put<int64_t>(bytes_, dims_offset, int64_t{1} << 60);
  write_bytes(path_, bytes_);
  expect_corrupt(path_, "tensor 0 of 6 ('bn.num_batches') int64[1152921504606846976] needs more bytes");

  put<int64_t>(bytes_, dims_offset, -3);
  write_bytes(path_, bytes_);
  expect_corrupt(path_, "negative dim -3");
}

TEST_F(CheckpointFile, TensorCountBeyondTheFileIsRefused) {
  const size_t offset = tensor_count_offset(sample());
  put<uint32_t>(bytes_, offset, 1000000);
  write_bytes(path_, bytes_);
  expect_corrupt(path_, "the tensor count 1000000 cannot fit");

  put<uint32_t>(bytes_, offset, 7);  // one more than the file holds: the records run out
  write_bytes(path_, bytes_);
  expect_corrupt(path_, "tensor 6 of 7");
}

TEST_F(CheckpointFile, FlippedByteFailsTheChecksum) {
  bytes_[bytes_.size() - 10] ^= 0x10;  // inside the last tensor's data ("scalar": 4 bytes before the checksum)
  write_bytes(path_, bytes_);
  expect_corrupt(path_, "checksum mismatch: the file is corrupt");
}

}  // namespace
}  // namespace ucudnn_test
