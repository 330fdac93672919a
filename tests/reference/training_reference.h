// Naive references of the training ops (docs/TRAINING.md), one file per op family
// (tests/reference/<family>_reference.cc), written independently of the kernels, in double.
#pragma once

#include <vector>

#include "runtime/core/status.h"
#include "runtime/core/tensor.h"
#include "runtime/ir/graph.h"

namespace ucudnn::reference {

Expected<std::vector<Tensor>> conv_grad_reference(const ir::Node& node, const std::vector<const Tensor*>& inputs);
Expected<std::vector<Tensor>> activation_grad_reference(const ir::Node& node, const std::vector<const Tensor*>& inputs);
Expected<std::vector<Tensor>> pooling_grad_reference(const ir::Node& node, const std::vector<const Tensor*>& inputs);
Expected<std::vector<Tensor>> batch_norm_train_reference(const ir::Node& node, const std::vector<const Tensor*>& inputs);
Expected<std::vector<Tensor>> softmax_loss_reference(const ir::Node& node, const std::vector<const Tensor*>& inputs);
Expected<std::vector<Tensor>> optimizer_update_reference(const ir::Node& node, const std::vector<const Tensor*>& inputs);

// The family reference for a training op (and ReduceSum, Expand); Unsupported for any other op.
Expected<std::vector<Tensor>> training_reference(const ir::Node& node, const std::vector<const Tensor*>& inputs);

}  // namespace ucudnn::reference
