// Descriptors of the broadcasting binary ops Add, Sub, Mul, Div, Pow, Mod (opset >= 7
// form: numpy multidirectional broadcasting, no `broadcast` attribute; the importer rewrites the older
// form, Note [legacy broadcasting] in onnx_import/upgrade.cc).
// Both inputs must have the same dtype: float32 for math, int64/int32 because
// exporters compute shapes with them (Shape → Gather → Mul → Reshape); Pow is float32 only.
// Gradient rules: each operand's gradient is computed at the output's shape,
// then summed back to the operand's (GradientContext::reduce_to_shape).
#include "runtime/ir/fusion.h"
#include "runtime/ops/gradient.h"
#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {

Status binary_infer(InferContext& ctx) {
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(0, {DType::kFloat32, DType::kInt64, DType::kInt32}));
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(1, {DType::kFloat32, DType::kInt64, DType::kInt32}));
  const DType dtype = ctx.input(0).dtype;
  if (ctx.input(1).dtype != dtype)
    return ctx.error(std::string("inputs must have the same dtype, got ") + dtype_name(dtype) + " and " +
                     dtype_name(ctx.input(1).dtype));
  Shape out;
  if (!broadcast_shapes(ctx.input(0).shape, ctx.input(1).shape, &out))
    return ctx.error("shapes " + shape_to_string(ctx.input(0).shape) + " and " +
                     shape_to_string(ctx.input(1).shape) + " are not broadcastable");
  ctx.set_output(0, dtype, std::move(out));
  return Status::ok();
}

// Mod(A, B): integers with either sign rule (fmod 0: the divisor's sign, as Python's %; fmod 1: the
// dividend's, as C's %), float32 only as C's fmod (the spec requires fmod = 1 there).
Status mod_infer(InferContext& ctx) {
  if (ctx.input(0).dtype == DType::kFloat32 && ctx.attrs().get_int("fmod") == 0)
    return ctx.error("float operands need fmod = 1 (the spec defines no other float Mod)");
  return binary_infer(ctx);
}

// Pow(X, Y): float32 base and exponent (ONNX allows integer ones too; exporters write float).
Status pow_infer(InferContext& ctx) {
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(0, {DType::kFloat32}));
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(1, {DType::kFloat32}));
  return binary_infer(ctx);
}

int64_t one_flop_per_element(const InferContext& ctx) { return shape_numel(ctx.output(0).shape); }

// Gives input i the gradient `grad` (at the output's shape) summed to the input's shape, scaled by
// -1 when `negate` (after the sum: fewer elements).
Status add_reduced_grad(GradientContext& ctx, size_t i, ir::ValueId grad, bool negate = false) {
  const Shape target = ctx.value(ctx.input(i)).shape;  // a copy: emitting nodes may move the graph's values
  UCUDNN_ASSIGN_OR_RETURN(ir::ValueId reduced, ctx.reduce_to_shape(grad, target));
  if (negate) {
    UCUDNN_ASSIGN_OR_RETURN(reduced, ctx.emit1(OpKind::kMul, {reduced, ctx.float_constant(-1.0f, "minus_one")}));
  }
  return ctx.add_input_grad(i, reduced);
}

// Add: dA = dY, dB = dY. Sub: dA = dY, dB = -dY.
Status add_sub_gradient(GradientContext& ctx) {
  if (const std::string activation = ir::fused_activation(ctx.node()); !activation.empty())  // Note [fused nodes]
    return ctx.unsupported("fused activation '" + activation + "' (training runs no fusion passes)");
  const ir::ValueId dy = ctx.output_grad(0);
  if (dy == ir::kNoValue) return Status::ok();
  if (ctx.needs_input_grad(0)) UCUDNN_RETURN_IF_ERROR(add_reduced_grad(ctx, 0, dy));
  if (ctx.needs_input_grad(1)) UCUDNN_RETURN_IF_ERROR(add_reduced_grad(ctx, 1, dy, ctx.node().op == OpKind::kSub));
  return Status::ok();
}

// dA = dY · B, dB = dY · A.
Status mul_gradient(GradientContext& ctx) {
  const ir::ValueId dy = ctx.output_grad(0);
  if (dy == ir::kNoValue) return Status::ok();
  for (size_t i = 0; i < 2; ++i) {
    if (!ctx.needs_input_grad(i)) continue;
    UCUDNN_ASSIGN_OR_RETURN(ir::ValueId grad, ctx.emit1(OpKind::kMul, {dy, ctx.input(1 - i)}));
    UCUDNN_RETURN_IF_ERROR(add_reduced_grad(ctx, i, grad));
  }
  return Status::ok();
}

// Y = A / B: dA = dY / B, dB = -dY · A / B² = -(dY / B) · Y (Y: the forward output, saved).
Status div_gradient(GradientContext& ctx) {
  const ir::ValueId dy = ctx.output_grad(0);
  if (dy == ir::kNoValue || (!ctx.needs_input_grad(0) && !ctx.needs_input_grad(1))) return Status::ok();
  UCUDNN_ASSIGN_OR_RETURN(ir::ValueId dy_over_b, ctx.emit1(OpKind::kDiv, {dy, ctx.input(1)}));
  if (ctx.needs_input_grad(0)) UCUDNN_RETURN_IF_ERROR(add_reduced_grad(ctx, 0, dy_over_b));
  if (!ctx.needs_input_grad(1)) return Status::ok();
  UCUDNN_ASSIGN_OR_RETURN(ir::ValueId grad, ctx.emit1(OpKind::kMul, {dy_over_b, ctx.output(0)}));
  return add_reduced_grad(ctx, 1, grad, /*negate=*/true);
}

// Z = A^B: dA = dY · B · A^(B - 1), dB = dY · Z · log(A) (NaN where A < 0, as the function's).
Status pow_gradient(GradientContext& ctx) {
  const ir::ValueId dy = ctx.output_grad(0);
  if (dy == ir::kNoValue) return Status::ok();
  if (ctx.needs_input_grad(0)) {
    const ir::ValueId one = ctx.float_constant(1.0f, "one");
    UCUDNN_ASSIGN_OR_RETURN(ir::ValueId lower, ctx.emit1(OpKind::kSub, {ctx.input(1), one}));
    UCUDNN_ASSIGN_OR_RETURN(ir::ValueId power, ctx.emit1(OpKind::kPow, {ctx.input(0), lower}));
    UCUDNN_ASSIGN_OR_RETURN(ir::ValueId slope, ctx.emit1(OpKind::kMul, {power, ctx.input(1)}));
    UCUDNN_ASSIGN_OR_RETURN(ir::ValueId grad, ctx.emit1(OpKind::kMul, {dy, slope}));
    UCUDNN_RETURN_IF_ERROR(add_reduced_grad(ctx, 0, grad));
  }
  if (!ctx.needs_input_grad(1)) return Status::ok();
  UCUDNN_ASSIGN_OR_RETURN(ir::ValueId log_a, ctx.emit1(OpKind::kLog, {ctx.input(0)}));
  UCUDNN_ASSIGN_OR_RETURN(ir::ValueId slope, ctx.emit1(OpKind::kMul, {ctx.output(0), log_a}));
  UCUDNN_ASSIGN_OR_RETURN(ir::ValueId grad, ctx.emit1(OpKind::kMul, {dy, slope}));
  return add_reduced_grad(ctx, 1, grad);
}

OpDescriptor binary_descriptor(OpKind kind, Status (*gradient)(GradientContext&),
                               Status (*infer)(InferContext&) = binary_infer) {
  return OpDescriptor{.kind = kind,
                      .min_inputs = 2,
                      .max_inputs = 2,
                      .min_opset = 1,  // the broadcast and axis of opsets 1-6: onnx_import/upgrade.cc
                      .infer = infer,
                      .flops = one_flop_per_element,
                      .gradient = gradient};
}

}  // namespace

const OpDescriptor& describe_Add() {
  static const OpDescriptor d = binary_descriptor(OpKind::kAdd, add_sub_gradient);
  return d;
}
const OpDescriptor& describe_Sub() {
  static const OpDescriptor d = binary_descriptor(OpKind::kSub, add_sub_gradient);
  return d;
}
const OpDescriptor& describe_Mul() {
  static const OpDescriptor d = binary_descriptor(OpKind::kMul, mul_gradient);
  return d;
}
const OpDescriptor& describe_Div() {
  static const OpDescriptor d = binary_descriptor(OpKind::kDiv, div_gradient);
  return d;
}

const OpDescriptor& describe_Mod() {
  static const OpDescriptor d = [] {
    OpDescriptor mod = binary_descriptor(OpKind::kMod, nullptr, mod_infer);
    mod.min_opset = 10;
    mod.attrs = {attr_int("fmod", 0)};
    return mod;
  }();
  return d;
}

const OpDescriptor& describe_Pow() {
  static const OpDescriptor d = binary_descriptor(OpKind::kPow, pow_gradient, pow_infer);
  return d;
}

}  // namespace ucudnn
