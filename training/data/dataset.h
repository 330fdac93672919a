// Dataset: what the DataLoader reads samples from — a fixed number of samples, each an image of
// one fixed shape [C, H, W] (float32, already transformed and normalised) and an int64 label.
//
// Implementations: IdxDataset (MNIST / Fashion-MNIST files, idx.h), ImageFolderDataset
// (JPEG/PNG folders with torchvision's transforms, image_folder.h) and SyntheticDataset
// (random samples for benchmarks, synthetic.h). All randomness of a sample comes from the seed
// the loader passes (random.h), so a sample is a pure function of (index, seed).
#pragma once

#include <cstdint>
#include <string>

#include "runtime/core/shape.h"
#include "runtime/core/status.h"

namespace ucudnn::data {

// Which part of a data set: the training samples or the held-out ones (MNIST's "t10k",
// ImageFolder's "val").
enum class Split { kTrain, kVal };
inline const char* split_name(Split split) { return split == Split::kTrain ? "train" : "val"; }

class Dataset {
 public:
  virtual ~Dataset() = default;

  // How many samples there are (> 0).
  virtual int64_t size() const = 0;
  // The shape of every sample's image, [C, H, W].
  virtual const Shape& image_shape() const = 0;
  // Labels lie in [0, num_classes()).
  virtual int64_t num_classes() const = 0;
  // One line for logs: the kind, where it was read from, the sample count and shape.
  virtual std::string describe() const = 0;

  // Writes sample `index` (0 <= index < size()), transformed with the draws of `seed`, as
  // float32 [C, H, W] into `dst` (numel(image_shape()) floats) and its label into `*label`.
  // A Status naming the file and what is wrong when the sample cannot be read. Safe to call
  // from several threads at once; never writes to the data set's files.
  virtual Status load(int64_t index, uint64_t seed, float* dst, int64_t* label) const = 0;
};

}  // namespace ucudnn::data
