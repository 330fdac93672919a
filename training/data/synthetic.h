// SyntheticDataset: random images and labels of a fixed shape and class count, for benchmarks
// (no files read). Sample i is a pure function of (seed, i), the same in every epoch:
//   label      splitmix64(splitmix64(seed) ^ i) mod num_classes
//   pixel j    uniform in [−1, 1): the top 24 bits of splitmix64(base + j) · 2^-23 − 1, where
//              base = splitmix64(splitmix64(seed) ^ i ^ 0x5851F42D4C957F2D)
// (the loader's sample seed is unused).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "training/data/dataset.h"

namespace ucudnn::data {

class SyntheticDataset final : public Dataset {
 public:
  // InvalidArgument unless size > 0, num_classes > 0 and image_shape has positive dims and rank >= 1: an
  // image [C, H, W], or any other sample (a clip [C, T, H, W] for a video network).
  static Expected<std::shared_ptr<SyntheticDataset>> create(int64_t size, const Shape& image_shape,
                                                            int64_t num_classes, uint64_t seed = 0);

  int64_t size() const override { return size_; }
  const Shape& image_shape() const override { return shape_; }
  int64_t num_classes() const override { return num_classes_; }
  std::string describe() const override;
  Status load(int64_t index, uint64_t seed, float* dst, int64_t* label) const override;

 private:
  SyntheticDataset() = default;

  int64_t size_ = 0, num_classes_ = 0, numel_ = 0;
  Shape shape_;
  uint64_t seed_ = 0;
};

}  // namespace ucudnn::data
