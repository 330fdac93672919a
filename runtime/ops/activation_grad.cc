// Descriptors of the activation_grad family (internal ops the training graph adds, docs/TRAINING.md):
//
//   ActivationGrad (dY, X, [low], [high]) → dX      dX = dY · activation'(X)
//   PReluGrad      (dY, X, slope)         → dX, dSlope
//   DropoutTrain   (X, seed)              → Y, mask  Y = X · mask
//
// ActivationGrad's `activation` names the forward op (Relu, LeakyRelu, Sigmoid, Tanh, HardSigmoid,
// HardSwish, Clip, Elu); `alpha` and `beta` are that op's attributes, copied by its gradient rule
// (the defaults here are placeholders: a rule always sets the ones its activation reads); low and
// high are Clip's optional scalar bounds. Derivatives at kinks: Note [derivatives at kinks]
// (activation_grad.h). PReluGrad's dSlope has the slope's shape (summed over the elements the slope
// is broadcast to). DropoutTrain's mask is 0 or 1 / (1 - ratio) per element, a pure function of
// (seed, index): Note [dropout hash]; seed is one int64, ratio in [0, 1). All float32.
#include "runtime/ops/activation_grad.h"

#include <string>

#include "runtime/core/bytes.h"
#include "runtime/ir/unary_ops.h"
#include "runtime/ops/gradient.h"
#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {

// The forward ops activation_derivative differentiates; each one's kind is its PointwiseOp
// (ir::pointwise_op_of).
constexpr const char* kActivations[] = {"Relu",        "LeakyRelu", "Sigmoid", "Tanh",
                                        "HardSigmoid", "HardSwish", "Clip",    "Elu"};

// dY and X: float32 of one shape.
Status expect_gradient_of(const InferContext& ctx) {
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(0, {DType::kFloat32}));
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(1, {DType::kFloat32}));
  if (ctx.input(0).shape != ctx.input(1).shape)
    return ctx.error("dY " + shape_to_string(ctx.input(0).shape) + " and X " + shape_to_string(ctx.input(1).shape) +
                     " must have the same shape");
  return Status::ok();
}

Status infer_activation_grad(InferContext& ctx) {
  UCUDNN_RETURN_IF_ERROR(expect_gradient_of(ctx));
  const std::string& name = ctx.attrs().get_string("activation");
  ActivationKind kind;
  if (!activation_kind_from_name(name, &kind))
    return ctx.error("activation '" + name + "' is not one of " + activation_kind_names());
  for (size_t i = 2; i < 4; ++i) {
    if (!ctx.has_input(i)) continue;
    const char* bound = i == 2 ? "low" : "high";
    if (kind != ActivationKind::kClip)
      return ctx.error(std::string("a ") + bound + " bound (input " + std::to_string(i) + ") is Clip's only, not " +
                       name + "'s");
    UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(i, {DType::kFloat32}));
    if (shape_numel(ctx.input(i).shape) != 1)
      return ctx.error(std::string(bound) + " must be a scalar, got shape " + shape_to_string(ctx.input(i).shape));
  }
  ctx.set_output(0, DType::kFloat32, ctx.input(1).shape);
  return Status::ok();
}

Status infer_prelu_grad(InferContext& ctx) {
  UCUDNN_RETURN_IF_ERROR(expect_gradient_of(ctx));
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(2, {DType::kFloat32}));
  const Shape& x = ctx.input(1).shape;
  const Shape& slope = ctx.input(2).shape;
  Shape out;
  if (!broadcast_shapes(x, slope, &out) || out != x)
    return ctx.error("slope shape " + shape_to_string(slope) + " does not broadcast to X's shape " +
                     shape_to_string(x));
  ctx.set_output(0, DType::kFloat32, x);
  ctx.set_output(1, DType::kFloat32, slope);
  return Status::ok();
}

Status infer_dropout_train(InferContext& ctx) {
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(0, {DType::kFloat32}));
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(1, {DType::kInt64}));
  if (shape_numel(ctx.input(1).shape) != 1)
    return ctx.error("seed must be one int64, got shape " + shape_to_string(ctx.input(1).shape));
  const float ratio = ctx.attrs().get_float("ratio");
  if (!(ratio >= 0.0f && ratio < 1.0f))
    return ctx.error("ratio " + std::to_string(ratio) + " must be in [0, 1)");
  ctx.set_output(0, DType::kFloat32, ctx.input(0).shape);
  ctx.set_output(1, DType::kFloat32, ctx.input(0).shape);
  return Status::ok();
}

// dX = dY · mask (the mask already holds the 1 / (1 - ratio) scale); the mask output takes no gradient.
Status dropout_train_gradient(GradientContext& ctx) {
  const ir::ValueId dy = ctx.output_grad(0);
  if (dy == ir::kNoValue || !ctx.needs_input_grad(0)) return Status::ok();
  UCUDNN_ASSIGN_OR_RETURN(ir::ValueId dx, ctx.emit1(OpKind::kMul, {dy, ctx.output(1)}));
  return ctx.add_input_grad(0, dx);
}

int64_t flops_per_element(const InferContext& ctx, int64_t per_element) {
  return saturating_mul(per_element, shape_numel(ctx.output(0).shape));
}
int64_t activation_grad_flops(const InferContext& ctx) { return flops_per_element(ctx, 4); }
int64_t prelu_grad_flops(const InferContext& ctx) { return flops_per_element(ctx, 3); }
int64_t dropout_train_flops(const InferContext& ctx) { return flops_per_element(ctx, 2); }

}  // namespace

bool activation_kind_from_name(const std::string& name, ActivationKind* kind) {
  OpKind op;
  for (const char* known : kActivations)
    if (name == known) return op_from_name(known, &op) && ir::pointwise_op_of(op, kind);
  return false;
}

const char* activation_kind_names() {
  static const std::string names = [] {
    std::string joined;
    for (const char* name : kActivations) joined += std::string(joined.empty() ? "" : ", ") + name;
    return joined;
  }();
  return names.c_str();
}

const OpDescriptor& describe_ActivationGrad() {
  static const OpDescriptor d{.kind = OpKind::kActivationGrad,
                              .min_inputs = 2,
                              .max_inputs = 4,
                              .attrs = {attr_required("activation", ir::AttrType::kString),
                                        attr_float("alpha", 0.0f), attr_float("beta", 0.0f)},
                              .infer = infer_activation_grad,
                              .flops = activation_grad_flops,
                              .internal = true};
  return d;
}

const OpDescriptor& describe_PReluGrad() {
  static const OpDescriptor d{.kind = OpKind::kPReluGrad,
                              .min_inputs = 3,
                              .max_inputs = 3,
                              .min_outputs = 2,
                              .max_outputs = 2,
                              .infer = infer_prelu_grad,
                              .flops = prelu_grad_flops,
                              .internal = true};
  return d;
}

const OpDescriptor& describe_DropoutTrain() {
  static const OpDescriptor d{.kind = OpKind::kDropoutTrain,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .min_outputs = 2,
                              .max_outputs = 2,
                              .attrs = {attr_float("ratio", 0.5f)},
                              .infer = infer_dropout_train,
                              .flops = dropout_train_flops,
                              .internal = true,
                              .gradient = dropout_train_gradient};
  return d;
}

}  // namespace ucudnn
