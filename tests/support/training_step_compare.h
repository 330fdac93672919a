// Two training graphs of one model run side by side (tests of the training graph's rewrites: the
// batch-norm fusion, pointwise fusion, channels-last): the inputs a step of such a graph reads, and
// the comparison of both steps' outputs on every backend present.
#pragma once

#include <string>
#include <vector>

#include "runtime/core/tensor.h"
#include "runtime/ir/graph.h"

namespace ucudnn_test {

// The inputs of a training graph of `inference` (docs/TRAINING.md): the batch `x` random (seeded),
// labels 1, 2, 0, 1, ... (models of 3 classes or more), and every parameter and running statistic as
// the model's initializer of that name.
std::vector<ucudnn::Tensor> training_inputs(const ucudnn::ir::Graph& inference, const ucudnn::ir::Graph& graph);

// Which backends a comparison runs on: every one present, or those that run the fused batch-norm forms
// (BackendCapabilities::trains_fused_batch_norm) or train channels-last (trains_channels_last).
enum class StepNeeds { kAnything, kFusedBatchNorm, kChannelsLast };

// Runs training graphs `want_graph` and `got_graph` (the same interface) on `inputs` on every backend
// present that has what `needs` says, and expects the same loss, logits, gradients and running
// statistics. The same arithmetic in another order of passes: on the CPU equal to rounding; on the GPU
// TF32 convolutions may round their inputs apart. A skip when no backend here qualifies.
void expect_same_step_everywhere(const ucudnn::ir::Graph& want_graph, const ucudnn::ir::Graph& got_graph,
                                 const std::vector<ucudnn::Tensor>& inputs, const std::string& what,
                                 StepNeeds needs = StepNeeds::kAnything);

}  // namespace ucudnn_test
