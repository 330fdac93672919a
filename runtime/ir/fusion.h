// Note [fused nodes]: what optimizer/passes may add to a node beyond ONNX, in
// one place for the passes that write it and the kernels that read it.
//
//  - A fused activation: Conv → Relu (fuse_conv_activation) and Add → Relu
//    become one node with the attribute `activation` = "Relu"; the kernel
//    applies it to its output in place or in its epilogue. On the GPU a depthwise
//    Conv may also carry "SiLU", "HardSwish", "Sigmoid" or "Clip" (with
//    `activation_min` / `activation_max`): fuse_depthwise_activation; the kernels
//    take it as an ir::ConvActivation (runtime/ir/conv_activation.h).
//  - A residual input: after fuse_conv_add a Conv may have a fourth input z
//    (not ONNX's), of Y's shape: Y = activation(conv(X, W) + B + z). When the
//    Conv runs as micro-batches, z is divided with X and Y.
#pragma once

#include <cstddef>
#include <string>
#include <utility>

#include "runtime/core/status.h"
#include "runtime/ir/conv_activation.h"
#include "runtime/ir/graph.h"

namespace ucudnn::ir {

inline constexpr const char* kFusedActivationAttr = "activation";
inline constexpr const char* kFusedActivationMinAttr = "activation_min";
inline constexpr const char* kFusedActivationMaxAttr = "activation_max";
inline constexpr size_t kConvResidualInput = 3;

// The activation fused into `node` ("Relu"), or "" when none.
inline std::string fused_activation(const Node& node) {
  return node.attrs.has(kFusedActivationAttr) ? node.attrs.get_string(kFusedActivationAttr) : std::string();
}

// A Conv's fused activation as the kernels take it; Unsupported naming it when it is none of those
// above. (Add takes "Relu" only.)
inline Expected<ConvActivation> conv_activation(const Node& node) {
  const std::string name = fused_activation(node);
  ConvActivation a;
  if (name.empty()) return a;
  static const std::pair<const char*, ConvActivationKind> kKinds[] = {
      {"Relu", PointwiseOp::kRelu}, {"SiLU", PointwiseOp::kSiLU}, {"HardSwish", PointwiseOp::kHardSwish},
      {"Sigmoid", PointwiseOp::kSigmoid}, {"Clip", PointwiseOp::kClip}};
  for (const auto& [known, kind] : kKinds)
    if (name == known) a.kind = kind;
  if (a.kind == PointwiseOp::kIdentity) return unsupported(node.describe() + ": fused activation '" + name + "'");
  if (a.kind == PointwiseOp::kClip) {
    a.min = static_cast<float>(node.attrs.get_float(kFusedActivationMinAttr));
    a.max = static_cast<float>(node.attrs.get_float(kFusedActivationMaxAttr));
  }
  return a;
}

// The convolution kernels the optimizer plans (micro-batches, algorithm, workspace): a Conv and
// the two backward directions the training graph adds (ConvGradData, ConvGradFilter).
inline bool is_convolution(const Node& node) {
  return node.op == OpKind::kConv || node.op == OpKind::kConvGradData || node.op == OpKind::kConvGradFilter;
}

// Whether input `i` of `node` is cut along the batch when the node runs as
// micro-batches (X, a Conv's residual z, and ConvGradFilter's dY); the others (weights) are shared.
inline bool is_batch_divided_input(const Node& node, size_t i) {
  return i == 0 || (node.op == OpKind::kConv && i == kConvResidualInput) ||
         (node.op == OpKind::kConvGradFilter && i == 1);
}

// Whether output `i` is cut along the batch: output 0 (Y, dX), except ConvGradFilter's dW, which
// every micro-batch adds to (the calls after the first accumulate: KernelRequest::accumulate).
inline bool is_batch_divided_output(const Node& node, size_t i) {
  return i == 0 && node.op != OpKind::kConvGradFilter;
}

}  // namespace ucudnn::ir
