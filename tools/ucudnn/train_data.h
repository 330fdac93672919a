// The data sets `ucudnn train` and `ucudnn eval` read: --data DIR (an IDX folder such as
// Fashion-MNIST's, or an ImageFolder tree) or --synthetic, checked against the model's input.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/core/status.h"
#include "runtime/core/tensor.h"
#include "training/data/dataset.h"

namespace ucudnn::cli {

// `dir` holds MNIST-layout IDX files ({train,t10k}-images-idx3-ubyte[.gz]): an IdxDataset;
// else an ImageFolder tree (dir/train, dir/val) transformed to the model's `image_shape`
// [C, H, W] (train: random resized crop + flip; val: resize + center crop). NotFound when the
// split is absent.
Expected<std::shared_ptr<const data::Dataset>> open_dataset(const std::string& dir, data::Split split,
                                                            const Shape& image_shape);

// InvalidArgument unless `dataset`'s samples have the model's image shape and its labels fit the
// model's `classes`; names the data set and the model's input.
Status check_dataset_fits(const data::Dataset& dataset, const Shape& image_shape, int64_t classes,
                          const std::string& input_name);

// Top-1 and top-5 accuracy of a model over `dataset` in its own order, batch by batch:
// `logits_of` takes images float32 `input` ([batch, C, H, W]; the last batch padded with
// zeros, its padding not counted) and returns the model's outputs, the first the logits.
struct Accuracy {
  int64_t samples = 0, top1 = 0, top5 = 0;
};
using LogitsOf = std::function<Expected<std::vector<Tensor>>(const Tensor& images)>;
Expected<Accuracy> measure_accuracy(std::shared_ptr<const data::Dataset> dataset, const Shape& input, int workers,
                                    const LogitsOf& logits_of);

}  // namespace ucudnn::cli
