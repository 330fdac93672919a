// The IDX format of MNIST and Fashion-MNIST (LeCun's "idx3-ubyte"/"idx1-ubyte" files), plain or
// gzip-compressed, and IdxDataset: images and labels from a pair of such files.
//
// An IDX file is a big-endian header — two zero bytes, a type byte (0x08: unsigned byte, the only
// type read here), the number of dimensions — then one uint32 per dimension, then the data in
// row-major order. Images: magic 0x00000803, dims [N, rows, cols]; labels: 0x00000801, dims [N].
// The data must be exactly as long as the header says: a truncated file or a header that
// declares more (or fewer) values than the file holds is an error naming the file and both sizes.
// Nothing is allocated from a header's word alone: data is read in bounded chunks.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/core/status.h"
#include "training/data/dataset.h"

namespace ucudnn::data {

// The mean and standard deviation of Fashion-MNIST's training pixels scaled to [0, 1], as
// commonly used with torchvision's Normalize((0.2860,), (0.3530,)).
inline constexpr float kFashionMnistMean = 0.2860f;
inline constexpr float kFashionMnistStd = 0.3530f;
// Where Debian's dataset-fashion-mnist package puts the four gzipped files.
inline constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

struct IdxImages {
  int64_t count = 0, rows = 0, cols = 0;
  std::vector<uint8_t> pixels;  // count * rows * cols, row-major
};

// Reads an IDX image file (magic 0x00000803), gzip or plain. NotFound / IoError / InvalidArgument
// (wrong magic, zero rows or columns, sizes that do not match the file) naming the file.
Expected<IdxImages> read_idx_images(const std::string& path);
// Reads an IDX label file (magic 0x00000801), gzip or plain; errors as read_idx_images.
Expected<std::vector<uint8_t>> read_idx_labels(const std::string& path);

struct IdxOptions {
  // Pixels become (x / 255 − mean) / std.
  float mean = kFashionMnistMean;
  float std = kFashionMnistStd;
};

// Images [1, rows, cols] and labels from an IDX pair, all held in memory (uint8; 47 MB for
// Fashion-MNIST's training set). No random transforms: the sample seed is unused.
class IdxDataset final : public Dataset {
 public:
  // Reads both files; InvalidArgument when their counts differ, the set is empty or std <= 0.
  static Expected<std::shared_ptr<IdxDataset>> open(const std::string& images_path, const std::string& labels_path,
                                                    const IdxOptions& options = {});
  // The files of MNIST's layout in `dir`: {train,t10k}-images-idx3-ubyte and
  // {train,t10k}-labels-idx1-ubyte, each plain or with ".gz" (the plain one wins when both exist).
  static Expected<std::shared_ptr<IdxDataset>> open_dir(const std::string& dir, Split split,
                                                        const IdxOptions& options = {});

  int64_t size() const override { return images_.count; }
  const Shape& image_shape() const override { return shape_; }
  int64_t num_classes() const override { return num_classes_; }
  std::string describe() const override;
  Status load(int64_t index, uint64_t seed, float* dst, int64_t* label) const override;

  const IdxImages& images() const { return images_; }
  const std::vector<uint8_t>& labels() const { return labels_; }

 private:
  IdxDataset() = default;

  IdxImages images_;
  std::vector<uint8_t> labels_;
  Shape shape_;
  int64_t num_classes_ = 0;  // the largest label + 1
  float mean_ = 0, std_ = 1;
  std::string source_;
};

}  // namespace ucudnn::data
