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
//
// Note [pointwise-depthwise fusion]: on the CPU a channels-last 1×1 Conv (stride 1, no padding, one
// group) whose output only a 3×3 depthwise Conv reads may become one FusedConvDepthwise node: inputs X,
// W, B of the 1×1 and W, B of the depthwise (kDepthwiseWeightInput, kDepthwiseBiasInput; either bias may
// be absent), the 1×1's activation as a Conv's (`activation`), the depthwise's strides, pads and
// activation as `depthwise_*`, output the depthwise's Y. oneDNN runs it as one primitive (a depthwise
// post-op), so the 1×1's output, the widest tensor of an inverted-residual block, is never written to
// memory whole. optimizer/plan_model.cc fuses a pair only where the fused kernel ran faster than the two
// planned convolutions (Note [timed depthwise fusion]); the plan names the depthwise Convs fused
// (runtime::Plan::fused_depthwise), so a saved plan rebuilds the same graph. Inference only: the
// weights must be constants, and training graphs never have it.
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
inline constexpr size_t kDepthwiseWeightInput = 3;  // FusedConvDepthwise's inputs: X, W, B, W_dw, B_dw
inline constexpr size_t kDepthwiseBiasInput = 4;
inline constexpr const char* kDepthwiseStridesAttr = "depthwise_strides";
inline constexpr const char* kDepthwisePadsAttr = "depthwise_pads";
inline constexpr const char* kDepthwiseActivationAttr = "depthwise_activation";
inline constexpr const char* kDepthwiseActivationMinAttr = "depthwise_activation_min";
inline constexpr const char* kDepthwiseActivationMaxAttr = "depthwise_activation_max";

// The activation fused into `node` ("Relu"), or "" when none.
inline std::string fused_activation(const Node& node) {
  return node.attrs.has(kFusedActivationAttr) ? node.attrs.get_string(kFusedActivationAttr) : std::string();
}

// A Conv's fused activation as the kernels take it (a FusedConvDepthwise's depthwise one: the
// kDepthwiseActivation* attributes); Unsupported naming it when it is none of those above. (Add takes
// "Relu" only.)
inline Expected<ConvActivation> conv_activation(const Node& node, const char* attr = kFusedActivationAttr,
                                                const char* min_attr = kFusedActivationMinAttr,
                                                const char* max_attr = kFusedActivationMaxAttr) {
  const std::string name = node.attrs.has(attr) ? node.attrs.get_string(attr) : std::string();
  ConvActivation a;
  if (name.empty()) return a;
  static const std::pair<const char*, ConvActivationKind> kKinds[] = {
      {"Relu", ConvActivationKind::kRelu}, {"SiLU", ConvActivationKind::kSiLU},
      {"HardSwish", ConvActivationKind::kHardSwish}, {"Sigmoid", ConvActivationKind::kSigmoid},
      {"Clip", ConvActivationKind::kClip}};
  for (const auto& [known, kind] : kKinds)
    if (name == known) a.kind = kind;
  if (a.kind == ConvActivationKind::kNone) return unsupported(node.describe() + ": fused activation '" + name + "'");
  if (a.kind == ConvActivationKind::kClip) {
    if (!node.attrs.has(min_attr) || !node.attrs.has(max_attr))
      return invalid_argument(node.describe() + ": a fused Clip without its bounds");
    a.min = static_cast<float>(node.attrs.get_float(min_attr));
    a.max = static_cast<float>(node.attrs.get_float(max_attr));
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
