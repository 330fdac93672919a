// ImageFolderDataset: torchvision's ImageFolder layout — ROOT/train/<class>/... and
// ROOT/val/<class>/... holding JPEG and PNG files — decoded on demand (image_decode.h) and
// transformed with torchvision's standard recipe (transforms.h).
//
// As torchvision's ImageFolder: classes are the sub-directories of the split's directory sorted
// by name (byte order; label = position in that list), files are found recursively under each
// (following symlinks), ordered by (directory path, file name), and kept when their name ends in
// .jpg, .jpeg or .png in any case; other files are ignored. A class without images is an error.
// The val split must list the same classes as the train split when both exist (else labels
// would disagree).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "training/data/dataset.h"
#include "training/data/transforms.h"

namespace ucudnn::data {

class ImageFolderDataset final : public Dataset {
 public:
  // ROOT/<split name>: the train split with the train transforms, val with the eval ones
  // (options.train is set accordingly). NotFound when the directory does not exist.
  static Expected<std::shared_ptr<ImageFolderDataset>> open(const std::string& root, Split split,
                                                            TransformOptions options = {});
  // One directory of class folders, with the transforms `options` asks for.
  static Expected<std::shared_ptr<ImageFolderDataset>> open_dir(const std::string& dir,
                                                                const TransformOptions& options);

  int64_t size() const override { return static_cast<int64_t>(files_.size()); }
  const Shape& image_shape() const override { return shape_; }
  int64_t num_classes() const override { return static_cast<int64_t>(classes_.size()); }
  std::string describe() const override;
  // Reads, decodes and transforms files()[index]; errors name the file.
  Status load(int64_t index, uint64_t seed, float* dst, int64_t* label) const override;

  const std::vector<std::string>& classes() const { return classes_; }
  const std::vector<std::string>& files() const { return files_; }
  const std::vector<int64_t>& labels() const { return labels_; }

 private:
  ImageFolderDataset() = default;

  std::string dir_;
  TransformOptions options_;
  Shape shape_;
  std::vector<std::string> classes_;
  std::vector<std::string> files_;
  std::vector<int64_t> labels_;
};

}  // namespace ucudnn::data
