// The activation a Conv applies in its epilogue (Note [fused nodes], runtime/ir/fusion.h), as plain
// data the kernels of both devices take: "Relu" (fuse_conv_activation), and "SiLU", "HardSwish",
// "Sigmoid" and "Clip" (what a FusedPointwise after the Conv computed: on the GPU after a depthwise Conv,
// fuse_depthwise_activation, in UCUDNN_DEPTHWISE's epilogue; on the CPU after any Conv,
// fuse_any_conv_activation, in oneDNN's post-ops). host and device code alike include this file.
#pragma once

#include "runtime/ir/pointwise_program.h"

namespace ucudnn::ir {

enum class ConvActivationKind : uint8_t { kNone, kRelu, kSiLU, kHardSwish, kSigmoid, kClip };

struct ConvActivation {
  ConvActivationKind kind = ConvActivationKind::kNone;
  float min = 0.f, max = 0.f;  // kClip's bounds
};

// Relu passes a NaN (cuDNN's CUDNN_PROPAGATE_NAN); the others compute as eval_pointwise does, as the
// FusedPointwise they replace did. (A lone HardSwish or Sigmoid node's own kernel writes the same
// function differently: results then differ in rounding, Sigmoid's far tail in denormals.)
UCUDNN_HOST_DEVICE inline float apply_conv_activation(const ConvActivation& a, float v) {
  switch (a.kind) {
    case ConvActivationKind::kNone: return v;
    case ConvActivationKind::kRelu: return v < 0.f ? 0.f : v;
    case ConvActivationKind::kSiLU:
      return eval_pointwise(PointwiseOp::kMul, v, eval_pointwise(PointwiseOp::kSigmoid, v, 0.f, 0.f, 0.f), 0.f, 0.f);
    case ConvActivationKind::kHardSwish: return eval_pointwise(PointwiseOp::kHardSwish, v, 0.f, 0.f, 0.f);
    case ConvActivationKind::kSigmoid: return eval_pointwise(PointwiseOp::kSigmoid, v, 0.f, 0.f, 0.f);
    case ConvActivationKind::kClip: return eval_pointwise(PointwiseOp::kClip, v, 0.f, a.min, a.max);
  }
  return v;
}

}  // namespace ucudnn::ir
