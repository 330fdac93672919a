// open_dataset and check_dataset_fits (train_data.h).
#include "tools/ucudnn/train_data.h"

#include <cstring>
#include <filesystem>

#include "training/data/idx.h"
#include "training/data/loader.h"
#include "training/data/image_folder.h"

namespace ucudnn::cli {

namespace {

bool has_idx_files(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const char* name : {"train-images-idx3-ubyte", "train-images-idx3-ubyte.gz", "t10k-images-idx3-ubyte",
                           "t10k-images-idx3-ubyte.gz"})
    if (fs::exists(fs::path(dir) / name, ec)) return true;
  return false;
}

}  // namespace

Expected<std::shared_ptr<const data::Dataset>> open_dataset(const std::string& dir, data::Split split,
                                                            const Shape& image_shape) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    return not_found("--data " + dir + ": no such directory (give an IDX folder or an ImageFolder tree)");
  if (has_idx_files(dir)) {
    UCUDNN_ASSIGN_OR_RETURN(auto idx, data::IdxDataset::open_dir(dir, split));
    return std::shared_ptr<const data::Dataset>(std::move(idx));
  }
  if (image_shape.size() != 3 || image_shape[1] != image_shape[2])
    return unsupported("--data " + dir + ": ImageFolder images are cropped square; the model's input is " +
                       shape_to_string(image_shape));
  data::TransformOptions transforms;
  transforms.size = image_shape[1];
  UCUDNN_ASSIGN_OR_RETURN(auto folder, data::ImageFolderDataset::open(dir, split, transforms));
  return std::shared_ptr<const data::Dataset>(std::move(folder));
}

Status check_dataset_fits(const data::Dataset& dataset, const Shape& image_shape, int64_t classes,
                          const std::string& input_name) {
  if (dataset.image_shape() != image_shape)
    return invalid_argument(dataset.describe() + ": samples are " + shape_to_string(dataset.image_shape()) +
                            ", the model's input '" + input_name + "' takes " + shape_to_string(image_shape) +
                            " per sample");
  if (dataset.num_classes() > classes)
    return invalid_argument(dataset.describe() + ": " + std::to_string(dataset.num_classes()) +
                            " classes, the model has " + std::to_string(classes) + " outputs per sample");
  return Status::ok();
}

Expected<Accuracy> measure_accuracy(std::shared_ptr<const data::Dataset> dataset, const Shape& input, int workers,
                                    const LogitsOf& logits_of) {
  data::LoaderOptions lo;
  lo.batch_size = input[0];
  lo.shuffle = false;
  lo.num_threads = workers;
  UCUDNN_ASSIGN_OR_RETURN(auto loader, data::DataLoader::create(std::move(dataset), lo));
  loader->start_epoch(0);
  UCUDNN_ASSIGN_OR_RETURN(Tensor images, Tensor::allocate(DType::kFloat32, input));
  Accuracy acc;
  while (true) {
    UCUDNN_ASSIGN_OR_RETURN(const data::Batch* batch, loader->next());
    if (batch == nullptr) break;
    const int64_t n = batch->labels.numel();  // the last batch may be short: padded with zeros
    std::memset(images.raw(), 0, images.nbytes());
    std::memcpy(images.raw(), batch->images.raw(), batch->images.nbytes());
    UCUDNN_ASSIGN_OR_RETURN(std::vector<Tensor> outputs, logits_of(images));
    const Tensor& logits = outputs.front();
    const int64_t classes = logits.shape().back();
    for (int64_t i = 0; i < n; ++i) {
      const float* row = logits.data<float>() + i * classes;
      const float mine = row[batch->labels.data<int64_t>()[i]];
      int64_t above = 0;  // logits larger than the label's
      for (int64_t c = 0; c < classes; ++c) above += row[c] > mine;
      acc.top1 += above == 0;
      acc.top5 += above < 5;
    }
    acc.samples += n;
  }
  return acc;
}

}  // namespace ucudnn::cli
