// SyntheticDataset (see synthetic.h): counter-based random samples.
#include "training/data/synthetic.h"

#include "training/data/random.h"

namespace ucudnn::data {

Expected<std::shared_ptr<SyntheticDataset>> SyntheticDataset::create(int64_t size, const Shape& image_shape,
                                                                     int64_t num_classes, uint64_t seed) {
  int64_t numel = 0;
  bool positive = !image_shape.empty();
  for (int64_t d : image_shape) positive = positive && d > 0;
  if (size <= 0 || num_classes <= 0 || !positive || !checked_numel(image_shape, &numel) || numel > (int64_t{1} << 40))
    return invalid_argument("a synthetic data set needs size > 0, classes > 0 and a sample shape ([C, H, W], "
                            "[C, T, H, W], ...) of positive dims (got " + std::to_string(size) + " samples, " +
                            std::to_string(num_classes) + " classes, shape " + shape_to_string(image_shape) + ")");
  std::shared_ptr<SyntheticDataset> set(new SyntheticDataset());
  set->size_ = size;
  set->num_classes_ = num_classes;
  set->numel_ = numel;
  set->shape_ = image_shape;
  set->seed_ = seed;
  return set;
}

std::string SyntheticDataset::describe() const {
  return "synthetic (seed " + std::to_string(seed_) + "): " + std::to_string(size_) + " images " +
         shape_to_string(shape_) + ", " + std::to_string(num_classes_) + " classes";
}

Status SyntheticDataset::load(int64_t index, uint64_t /*seed*/, float* dst, int64_t* label) const {
  if (index < 0 || index >= size_)
    return invalid_argument("sample " + std::to_string(index) + " is outside the synthetic data set (" +
                            std::to_string(size_) + " samples)");
  const uint64_t key = splitmix64(seed_) ^ static_cast<uint64_t>(index);
  *label = static_cast<int64_t>(splitmix64(key) % static_cast<uint64_t>(num_classes_));
  const uint64_t base = splitmix64(key ^ 0x5851F42D4C957F2Dull);
  for (int64_t j = 0; j < numel_; ++j)
    dst[j] = static_cast<float>(static_cast<int32_t>(splitmix64(base + static_cast<uint64_t>(j)) >> 40)) * 0x1.0p-23f - 1.0f;
  return Status::ok();
}

}  // namespace ucudnn::data
