// The activation a Conv applies in its epilogue (Note [fused nodes], runtime/ir/fusion.h), as plain
// data the kernels of both devices take: "Relu" (fuse_conv_activation), and "SiLU", "HardSwish",
// "Sigmoid" and "Clip" (what a FusedPointwise after the Conv computed: on the GPU after a depthwise Conv,
// fuse_depthwise_activation, in UCUDNN_DEPTHWISE's epilogue; on the CPU after any Conv,
// fuse_any_conv_activation, in oneDNN's post-ops). host and device code alike include this file.
#pragma once

#include "runtime/ir/pointwise_program.h"

namespace ucudnn::ir {

// A Conv's activation is a PointwiseOp of one operand (Note [one formula per op],
// runtime/ir/pointwise_program.h): kIdentity (none), kRelu, kSiLU, kHardSwish, kSigmoid or kClip.
using ConvActivationKind = PointwiseOp;

struct ConvActivation {
  ConvActivationKind kind = PointwiseOp::kIdentity;
  float min = 0.f, max = 0.f;  // kClip's bounds (its p0, p1)
};

// eval_pointwise of the activation, as the FusedPointwise it replaces computed it on the GPU (Relu
// passes a NaN, as cuDNN's CUDNN_PROPAGATE_NAN). A lone HardSwish or Clip node's own kernel computes
// its op in its own way (Note [lone-node forms]); on the CPU, SiLU and Sigmoid run through the vector
// forms instead (Note [vector activations], runtime/cpu/vector_activations.h).
// The switch names the six kinds conv_activation (runtime/ir/fusion.h) accepts, so that a kernel's
// epilogue inlines six formulas, not every op's.
UCUDNN_HOST_DEVICE inline float apply_conv_activation(const ConvActivation& a, float v) {
  switch (a.kind) {
    case PointwiseOp::kRelu: return eval_pointwise(PointwiseOp::kRelu, v, 0.f, 0.f, 0.f);
    case PointwiseOp::kSiLU: return eval_pointwise(PointwiseOp::kSiLU, v, 0.f, 0.f, 0.f);
    case PointwiseOp::kHardSwish: return eval_pointwise(PointwiseOp::kHardSwish, v, 0.f, 0.f, 0.f);
    case PointwiseOp::kSigmoid: return eval_pointwise(PointwiseOp::kSigmoid, v, 0.f, 0.f, 0.f);
    case PointwiseOp::kClip: return eval_pointwise(PointwiseOp::kClip, v, 0.f, a.min, a.max);
    default: return v;  // kIdentity: no activation
  }
}

}  // namespace ucudnn::ir
