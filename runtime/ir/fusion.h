// Note [fused nodes]: what optimizer/passes may add to a node beyond ONNX, in
// one place for the passes that write it and the kernels that read it.
//
//  - A fused activation: Conv → Relu (fuse_conv_activation) and Add → Relu
//    become one node with the attribute `activation` = "Relu"; the kernel
//    applies it to its output in place or in its epilogue.
//  - A residual input: after fuse_conv_add a Conv may have a fourth input z
//    (not ONNX's), of Y's shape: Y = activation(conv(X, W) + B + z). When the
//    Conv runs as micro-batches, z is divided with X and Y.
#pragma once

#include <cstddef>
#include <string>

#include "runtime/ir/graph.h"

namespace ucudnn::ir {

inline constexpr const char* kFusedActivationAttr = "activation";
inline constexpr size_t kConvResidualInput = 3;

// The activation fused into `node` ("Relu"), or "" when none.
inline std::string fused_activation(const Node& node) {
  return node.attrs.has(kFusedActivationAttr) ? node.attrs.get_string(kFusedActivationAttr) : std::string();
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
