// OpKind → PointwiseOp, in one place (Note [one formula per op], runtime/ir/pointwise_program.h), and
// the parameters p0, p1 a node's ONNX attributes give its PointwiseOp. The lone nodes' kernels of
// both backends (runtime/cpu/activations.cc, runtime/cuda/elementwise.cc) and ActivationGrad's kinds
// (runtime/ops/activation_grad.cc) find their op here. Host code only.
#pragma once

#include "runtime/ir/attributes.h"
#include "runtime/ir/op_list.h"
#include "runtime/ir/pointwise_program.h"

namespace ucudnn::ir {

// The PointwiseOp a node of `kind` computes element by element — the unary ops of
// UCUDNN_FOR_EACH_UNARY_NODE_OP, Clip, Identity, PRelu, and float Add, Sub, Mul, Div and Pow — into
// *op; false for every other kind.
inline bool pointwise_op_of(OpKind kind, PointwiseOp* op) {
  switch (kind) {
#define UCUDNN_POINTWISE_OP_CASE(name) \
  case OpKind::k##name: *op = PointwiseOp::k##name; return true;
    UCUDNN_FOR_EACH_UNARY_NODE_OP(UCUDNN_POINTWISE_OP_CASE)
    UCUDNN_POINTWISE_OP_CASE(Clip)
    UCUDNN_POINTWISE_OP_CASE(Identity)
    UCUDNN_POINTWISE_OP_CASE(PRelu)
    UCUDNN_POINTWISE_OP_CASE(Add)
    UCUDNN_POINTWISE_OP_CASE(Sub)
    UCUDNN_POINTWISE_OP_CASE(Mul)
    UCUDNN_POINTWISE_OP_CASE(Div)
    UCUDNN_POINTWISE_OP_CASE(Pow)
#undef UCUDNN_POINTWISE_OP_CASE
    default: return false;
  }
}

struct PointwiseParameters {
  float p0 = 0.f, p1 = 0.f;
};

// The immediates p0, p1 of `op` (see PointwiseOp) from a node's attributes, under their ONNX names:
// alpha (LeakyRelu, Elu, Celu, ThresholdedRelu), alpha and beta (HardSigmoid), alpha and gamma
// (Selu), lambd and bias (Shrink); zeros for ops without. Clip's bounds are inputs: its kernels read them.
inline PointwiseParameters pointwise_parameters(const Attributes& attrs, PointwiseOp op) {
  switch (op) {
    case PointwiseOp::kLeakyRelu:
    case PointwiseOp::kElu:
    case PointwiseOp::kCelu:
    case PointwiseOp::kThresholdedRelu: return {attrs.get_float("alpha"), 0.f};
    case PointwiseOp::kHardSigmoid: return {attrs.get_float("alpha"), attrs.get_float("beta")};
    case PointwiseOp::kSelu: return {attrs.get_float("alpha"), attrs.get_float("gamma")};
    case PointwiseOp::kShrink: return {attrs.get_float("lambd"), attrs.get_float("bias")};
    default: return {};
  }
}

}  // namespace ucudnn::ir
