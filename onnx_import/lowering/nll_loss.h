// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (opset 12 on), the ONNX loss ops, lowered at import
// (Note [lowered ops], runtime/ops/lowered_ops.h) into ops both backends run:
//   NegativeLogLikelihoodLoss(X [N, C, d...], target [N, d...], weight [C]?; reduction, ignore_index):
//     w_i = weight[target_i] (1 without weights), 0 where target_i = ignore_index;
//     loss_i = -X[n, target_i, d...] · w_i, then "none": loss [N, d...], "sum": Σ loss, "mean": Σ loss / Σ w.
//   Lowered: target with the ignored entries set to class 0 (Equal, Where), Unsqueeze, GatherElements on
//   axis 1, Reshape, a Gather of the weights, Where for the ignored entries, Neg, Mul, ReduceSum, Div.
//   SoftmaxCrossEntropyLoss(scores, labels, weights?; reduction, ignore_index) → (loss, log_prob?) is
//   LogSoftmax over axis 1, whose output is log_prob, then the same.
// Labels outside [0, C) other than ignore_index are refused at run time by GatherElements ("<node>/picked").
// Not the trainer's loss: that is SoftmaxCrossEntropyMean (runtime/ops/softmax_loss.cc, docs/TRAINING.md).
#pragma once

#include "runtime/core/status.h"
#include "runtime/ir/graph.h"

namespace ucudnn {

// Rewrites every NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss of `graph` (shapes inferred).
Status lower_losses(ir::Graph& graph);

}  // namespace ucudnn
