// Descriptors of the elementwise unary ops: the activations Relu, LeakyRelu, PRelu,
// Sigmoid, Tanh, HardSigmoid, HardSwish, Clip, Elu, Erf, Softplus, Softsign, Celu, Selu,
// ThresholdedRelu, Shrink, and the math functions Sqrt, Exp, Log, Abs, Neg, Reciprocal,
// Floor, Ceil, Round, Sign and the trigonometric and hyperbolic functions and their
// inverses. Output = input's dtype and shape
// (PRelu: the input's shape; its slope broadcasts to it unidirectionally).
// All are float32 only. Clip takes min/max as optional scalar inputs (the
// importer turns Clip<11's attributes into inputs); they may be runtime values.
// Gradient rules: ActivationGrad (runtime/ops/activation_grad.cc) for the
// activations with one, PReluGrad for PRelu, and for Softplus, Softsign and some math
// functions ordinary ops on X, Y and dY (below). Floor, Ceil, Round and Sign have a zero
// derivative wherever they have one. Erf, Celu, Selu, ThresholdedRelu, Shrink and the functions
// besides Sin and Cos have none yet.
#include <string>

#include "runtime/core/bytes.h"
#include "runtime/ops/gradient.h"
#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {

Status same_as_float_input(InferContext& ctx) {
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(0, {DType::kFloat32}));
  ctx.set_output(0, ctx.input(0).dtype, ctx.input(0).shape);
  return Status::ok();
}

int64_t one_flop_per_element(const InferContext& ctx) { return shape_numel(ctx.output(0).shape); }
int64_t four_flops_per_element(const InferContext& ctx) {
  return saturating_mul(int64_t{4}, shape_numel(ctx.output(0).shape));
}

Status prelu_infer(InferContext& ctx) {
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(0, {DType::kFloat32}));
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(1, {DType::kFloat32}));
  const Shape& x = ctx.input(0).shape;
  const Shape& slope = ctx.input(1).shape;
  Shape out;
  if (!broadcast_shapes(x, slope, &out) || out != x)
    return ctx.error("slope shape " + shape_to_string(slope) + " does not broadcast to input shape " +
                     shape_to_string(x));
  ctx.set_output(0, DType::kFloat32, x);
  return Status::ok();
}

Status clip_infer(InferContext& ctx) {
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(0, {DType::kFloat32}));
  for (size_t i = 1; i < 3; ++i) {
    if (!ctx.has_input(i)) continue;
    UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(i, {DType::kFloat32}));
    if (shape_numel(ctx.input(i).shape) != 1)
      return ctx.error(std::string(i == 1 ? "min" : "max") + " must be a scalar, got shape " +
                       shape_to_string(ctx.input(i).shape));
  }
  ctx.set_output(0, DType::kFloat32, ctx.input(0).shape);
  return Status::ok();
}

// dX = ActivationGrad(dY, X) naming the forward op, with its alpha/beta (and Clip's bounds).
// Relu passes its output Y for X: Relu'(x) is 1 exactly where y = relu(x) > 0, and keeping Y
// (which the next layer keeps anyway) rather than X lets X's memory go after the forward Relu —
// as PyTorch's in-place ReLU saves only its output (ResNet-18 at batch 16: activations 447 → 308 MiB).
Status activation_gradient(GradientContext& ctx) {
  const ir::Node& node = ctx.node();
  if (node.op == OpKind::kClip && (ctx.needs_input_grad(1) || ctx.needs_input_grad(2)))
    return ctx.unsupported("no gradient with respect to Clip's min or max input");
  const ir::ValueId dy = ctx.output_grad(0);
  if (dy == ir::kNoValue || !ctx.needs_input_grad(0)) return Status::ok();
  ir::Attributes attrs;
  attrs.set("activation", std::string(op_name(node.op)));
  for (const char* name : {"alpha", "beta"})
    if (node.attrs.has(name)) attrs.set(name, node.attrs.get_float(name));
  std::vector<ir::ValueId> inputs = {dy, node.op == OpKind::kRelu ? ctx.output(0) : ctx.input(0)};
  if (node.op == OpKind::kClip) {
    inputs.push_back(ctx.input(1));  // kNoValue when absent
    inputs.push_back(ctx.input(2));
    while (inputs.back() == ir::kNoValue) inputs.pop_back();
  }
  UCUDNN_ASSIGN_OR_RETURN(ir::ValueId dx, ctx.emit1(OpKind::kActivationGrad, std::move(inputs), std::move(attrs)));
  return ctx.add_input_grad(0, dx);
}

// (dX, dSlope) = PReluGrad(dY, X, slope); dSlope already has the slope's shape.
Status prelu_gradient(GradientContext& ctx) {
  const ir::ValueId dy = ctx.output_grad(0);
  if (dy == ir::kNoValue || (!ctx.needs_input_grad(0) && !ctx.needs_input_grad(1))) return Status::ok();
  UCUDNN_ASSIGN_OR_RETURN(std::vector<ir::ValueId> grads,
                          ctx.emit(OpKind::kPReluGrad, {dy, ctx.input(0), ctx.input(1)}, {}, 2));
  for (size_t i = 0; i < 2; ++i)
    if (ctx.needs_input_grad(i)) UCUDNN_RETURN_IF_ERROR(ctx.add_input_grad(i, grads[i]));
  return Status::ok();
}

// Softplus and the math functions: dX = dY · f'(x), f' written with ops the graph has, on X
// (`input`) or on the forward output Y (`output`, which the next layer keeps anyway). `build` makes
// dX from dY.
template <typename Build>
Status unary_gradient(GradientContext& ctx, Build build) {
  const ir::ValueId dy = ctx.output_grad(0);
  if (dy == ir::kNoValue || !ctx.needs_input_grad(0)) return Status::ok();
  UCUDNN_ASSIGN_OR_RETURN(ir::ValueId dx, build(dy));
  return ctx.add_input_grad(0, dx);
}

Status softplus_gradient(GradientContext& ctx) {  // f' = sigmoid(x)
  return unary_gradient(ctx, [&](ir::ValueId dy) -> Expected<ir::ValueId> {
    UCUDNN_ASSIGN_OR_RETURN(ir::ValueId slope, ctx.emit1(OpKind::kSigmoid, {ctx.input(0)}));
    return ctx.emit1(OpKind::kMul, {dy, slope});
  });
}

Status sqrt_gradient(GradientContext& ctx) {  // dX = dY / (2y)
  return unary_gradient(ctx, [&](ir::ValueId dy) -> Expected<ir::ValueId> {
    UCUDNN_ASSIGN_OR_RETURN(ir::ValueId half, ctx.emit1(OpKind::kMul, {dy, ctx.float_constant(0.5f, "half")}));
    return ctx.emit1(OpKind::kDiv, {half, ctx.output(0)});
  });
}

Status exp_gradient(GradientContext& ctx) {  // dX = dY · y
  return unary_gradient(ctx, [&](ir::ValueId dy) { return ctx.emit1(OpKind::kMul, {dy, ctx.output(0)}); });
}

Status log_gradient(GradientContext& ctx) {  // dX = dY / x
  return unary_gradient(ctx, [&](ir::ValueId dy) { return ctx.emit1(OpKind::kDiv, {dy, ctx.input(0)}); });
}

Status neg_gradient(GradientContext& ctx) {  // dX = -dY
  return unary_gradient(ctx, [&](ir::ValueId dy) { return ctx.emit1(OpKind::kNeg, {dy}); });
}

Status abs_gradient(GradientContext& ctx) {  // dX = dY · sign(x)
  return unary_gradient(ctx, [&](ir::ValueId dy) -> Expected<ir::ValueId> {
    UCUDNN_ASSIGN_OR_RETURN(ir::ValueId sign, ctx.emit1(OpKind::kSign, {ctx.input(0)}));
    return ctx.emit1(OpKind::kMul, {dy, sign});
  });
}

Status sin_gradient(GradientContext& ctx) {  // dX = dY · cos(x)
  return unary_gradient(ctx, [&](ir::ValueId dy) -> Expected<ir::ValueId> {
    UCUDNN_ASSIGN_OR_RETURN(ir::ValueId slope, ctx.emit1(OpKind::kCos, {ctx.input(0)}));
    return ctx.emit1(OpKind::kMul, {dy, slope});
  });
}

Status cos_gradient(GradientContext& ctx) {  // dX = -dY · sin(x)
  return unary_gradient(ctx, [&](ir::ValueId dy) -> Expected<ir::ValueId> {
    UCUDNN_ASSIGN_OR_RETURN(ir::ValueId slope, ctx.emit1(OpKind::kSin, {ctx.input(0)}));
    UCUDNN_ASSIGN_OR_RETURN(ir::ValueId scaled, ctx.emit1(OpKind::kMul, {dy, slope}));
    return ctx.emit1(OpKind::kNeg, {scaled});
  });
}

Status softsign_gradient(GradientContext& ctx) {  // dX = dY / (1 + |x|)²
  return unary_gradient(ctx, [&](ir::ValueId dy) -> Expected<ir::ValueId> {
    UCUDNN_ASSIGN_OR_RETURN(ir::ValueId magnitude, ctx.emit1(OpKind::kAbs, {ctx.input(0)}));
    UCUDNN_ASSIGN_OR_RETURN(ir::ValueId denominator,
                            ctx.emit1(OpKind::kAdd, {magnitude, ctx.float_constant(1.0f, "one")}));
    UCUDNN_ASSIGN_OR_RETURN(ir::ValueId square, ctx.emit1(OpKind::kMul, {denominator, denominator}));
    return ctx.emit1(OpKind::kDiv, {dy, square});
  });
}

// Floor, Ceil, Round, Sign: steps, whose derivative is 0 wherever there is one (as PyTorch's).
Status step_gradient(GradientContext& ctx) {
  return unary_gradient(ctx, [&](ir::ValueId dy) {
    return ctx.emit1(OpKind::kMul, {dy, ctx.float_constant(0.0f, "zero")});
  });
}

Status reciprocal_gradient(GradientContext& ctx) {  // dX = -dY · y²
  return unary_gradient(ctx, [&](ir::ValueId dy) -> Expected<ir::ValueId> {
    UCUDNN_ASSIGN_OR_RETURN(ir::ValueId square, ctx.emit1(OpKind::kMul, {ctx.output(0), ctx.output(0)}));
    UCUDNN_ASSIGN_OR_RETURN(ir::ValueId scaled, ctx.emit1(OpKind::kMul, {dy, square}));
    return ctx.emit1(OpKind::kNeg, {scaled});
  });
}

OpDescriptor math_descriptor(OpKind kind, Status (*gradient)(GradientContext&), int min_opset = 1) {
  return OpDescriptor{.kind = kind,
                      .min_opset = min_opset,
                      .infer = same_as_float_input,
                      .flops = one_flop_per_element,
                      .gradient = gradient};
}

}  // namespace

const OpDescriptor& describe_Relu() {
  static const OpDescriptor d{.kind = OpKind::kRelu,
                              .min_opset = 1,
                              .infer = same_as_float_input,
                              .flops = one_flop_per_element,
                              .gradient = activation_gradient};
  return d;
}

const OpDescriptor& describe_LeakyRelu() {
  static const OpDescriptor d{.kind = OpKind::kLeakyRelu,
                              .min_opset = 1,
                              .attrs = {attr_float("alpha", 0.01f)},
                              .infer = same_as_float_input,
                              .flops = one_flop_per_element,
                              .gradient = activation_gradient};
  return d;
}

const OpDescriptor& describe_PRelu() {
  static const OpDescriptor d{.kind = OpKind::kPRelu,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .min_opset = 1,
                              .infer = prelu_infer,
                              .flops = one_flop_per_element,
                              .gradient = prelu_gradient};
  return d;
}

const OpDescriptor& describe_Sigmoid() {
  static const OpDescriptor d{.kind = OpKind::kSigmoid,
                              .min_opset = 1,
                              .infer = same_as_float_input,
                              .flops = four_flops_per_element,
                              .gradient = activation_gradient};
  return d;
}

const OpDescriptor& describe_Tanh() {
  static const OpDescriptor d{.kind = OpKind::kTanh,
                              .min_opset = 1,
                              .infer = same_as_float_input,
                              .flops = four_flops_per_element,
                              .gradient = activation_gradient};
  return d;
}

const OpDescriptor& describe_HardSigmoid() {
  static const OpDescriptor d{.kind = OpKind::kHardSigmoid,
                              .min_opset = 1,
                              .attrs = {attr_float("alpha", 0.2f), attr_float("beta", 0.5f)},
                              .infer = same_as_float_input,
                              .flops = four_flops_per_element,
                              .gradient = activation_gradient};
  return d;
}

const OpDescriptor& describe_HardSwish() {
  static const OpDescriptor d{.kind = OpKind::kHardSwish,
                              .min_opset = 14,
                              .infer = same_as_float_input,
                              .flops = four_flops_per_element,
                              .gradient = activation_gradient};
  return d;
}

const OpDescriptor& describe_Clip() {
  static const OpDescriptor d{.kind = OpKind::kClip,
                              .min_inputs = 1,
                              .max_inputs = 3,
                              .min_opset = 6,
                              .infer = clip_infer,
                              .flops = one_flop_per_element,
                              .gradient = activation_gradient};
  return d;
}

const OpDescriptor& describe_Elu() {
  static const OpDescriptor d{.kind = OpKind::kElu,
                              .min_opset = 1,
                              .attrs = {attr_float("alpha", 1.0f)},
                              .infer = same_as_float_input,
                              .flops = four_flops_per_element,
                              .gradient = activation_gradient};
  return d;
}

// erf(x), the error function (opset 9; GELU's exact form uses it).
const OpDescriptor& describe_Erf() {
  static const OpDescriptor d{.kind = OpKind::kErf,
                              .min_opset = 9,
                              .infer = same_as_float_input,
                              .flops = four_flops_per_element};
  return d;
}

// GELU (opset 20; the default PyTorch exporter writes it for nn.GELU): approximate "none" gives
// x · Φ(x) = 0.5 · x · (1 + erf(x / √2)), "tanh" 0.5 · x · (1 + tanh(√(2/π) · (x + 0.044715 · x³))).
// Lowered at import into those elementwise ops (onnx_import/lowering/gelu.h), which fuse_pointwise joins.
namespace {
Status infer_gelu(InferContext& ctx) {
  const std::string approximate = ctx.attrs().get_string("approximate");
  if (approximate != "none" && approximate != "tanh")
    return ctx.error("approximate '" + approximate + "' must be 'none' or 'tanh'");
  return same_as_float_input(ctx);
}
}  // namespace

const OpDescriptor& describe_Gelu() {
  static const OpDescriptor d{.kind = OpKind::kGelu,
                              .min_opset = 20,
                              .attrs = {attr_string("approximate", "none")},
                              .infer = infer_gelu,
                              .flops = four_flops_per_element};
  return d;
}

// log(1 + exp(x)) (opset 1).
const OpDescriptor& describe_Softplus() {
  static const OpDescriptor d{.kind = OpKind::kSoftplus,
                              .min_opset = 1,
                              .infer = same_as_float_input,
                              .flops = four_flops_per_element,
                              .gradient = softplus_gradient};
  return d;
}

// The math functions (opset 6 forms; 13 only widens their dtypes, which stay float32 here).
const OpDescriptor& describe_Sqrt() {
  static const OpDescriptor d = math_descriptor(OpKind::kSqrt, sqrt_gradient);
  return d;
}
const OpDescriptor& describe_Exp() {
  static const OpDescriptor d = math_descriptor(OpKind::kExp, exp_gradient);
  return d;
}
const OpDescriptor& describe_Log() {
  static const OpDescriptor d = math_descriptor(OpKind::kLog, log_gradient);
  return d;
}
const OpDescriptor& describe_Abs() {
  static const OpDescriptor d = math_descriptor(OpKind::kAbs, abs_gradient);
  return d;
}
const OpDescriptor& describe_Neg() {
  static const OpDescriptor d = math_descriptor(OpKind::kNeg, neg_gradient);
  return d;
}
const OpDescriptor& describe_Reciprocal() {
  static const OpDescriptor d = math_descriptor(OpKind::kReciprocal, reciprocal_gradient);
  return d;
}

// x / (1 + |x|) (opset 1).
const OpDescriptor& describe_Softsign() {
  static const OpDescriptor d{.kind = OpKind::kSoftsign,
                              .min_opset = 1,
                              .infer = same_as_float_input,
                              .flops = four_flops_per_element,
                              .gradient = softsign_gradient};
  return d;
}

// max(0, x) + min(0, alpha · (exp(x / alpha) - 1)) (opset 12).
const OpDescriptor& describe_Celu() {
  static const OpDescriptor d{.kind = OpKind::kCelu,
                              .min_opset = 12,
                              .attrs = {attr_float("alpha", 1.0f)},
                              .infer = same_as_float_input,
                              .flops = four_flops_per_element};
  return d;
}

// gamma · (x where x > 0, else alpha · (exp(x) - 1)) (opset 6's defaults; Selu-1's, 1.6732 and 1.0507, are
// filled in by onnx_import/upgrade.cc).
const OpDescriptor& describe_Selu() {
  static const OpDescriptor d{.kind = OpKind::kSelu,
                              .min_opset = 1,
                              .attrs = {attr_float("alpha", 1.67326319217681884765625f),
                                        attr_float("gamma", 1.05070102214813232421875f)},
                              .infer = same_as_float_input,
                              .flops = four_flops_per_element};
  return d;
}

// x where x > alpha, else 0 (opset 10).
const OpDescriptor& describe_ThresholdedRelu() {
  static const OpDescriptor d{.kind = OpKind::kThresholdedRelu,
                              .min_opset = 10,
                              .attrs = {attr_float("alpha", 1.0f)},
                              .infer = same_as_float_input,
                              .flops = one_flop_per_element};
  return d;
}

// x + bias where x < -lambd, x - bias where x > lambd, else 0 (opset 9).
const OpDescriptor& describe_Shrink() {
  static const OpDescriptor d{.kind = OpKind::kShrink,
                              .min_opset = 9,
                              .attrs = {attr_float("bias", 0.0f), attr_float("lambd", 0.5f)},
                              .infer = same_as_float_input,
                              .flops = one_flop_per_element};
  return d;
}

// Floor, Ceil (opset 6), Round (opset 11: halves to even), Sign (opset 9: -1, 0 or 1).
const OpDescriptor& describe_Floor() {
  static const OpDescriptor d = math_descriptor(OpKind::kFloor, step_gradient);
  return d;
}
const OpDescriptor& describe_Ceil() {
  static const OpDescriptor d = math_descriptor(OpKind::kCeil, step_gradient);
  return d;
}
const OpDescriptor& describe_Round() {
  static const OpDescriptor d = math_descriptor(OpKind::kRound, step_gradient, 11);
  return d;
}
const OpDescriptor& describe_Sign() {
  static const OpDescriptor d = math_descriptor(OpKind::kSign, step_gradient, 9);
  return d;
}

// The trigonometric functions and their inverses (opset 7), the hyperbolic ones and theirs (opset 9).
const OpDescriptor& describe_Sin() {
  static const OpDescriptor d = math_descriptor(OpKind::kSin, sin_gradient, 7);
  return d;
}
const OpDescriptor& describe_Cos() {
  static const OpDescriptor d = math_descriptor(OpKind::kCos, cos_gradient, 7);
  return d;
}
#define UCUDNN_MATH_WITHOUT_GRADIENT(name, opset)                                  \
  const OpDescriptor& describe_##name() {                                         \
    static const OpDescriptor d = math_descriptor(OpKind::k##name, nullptr, opset); \
    return d;                                                                     \
  }
UCUDNN_MATH_WITHOUT_GRADIENT(Tan, 7)
UCUDNN_MATH_WITHOUT_GRADIENT(Asin, 7)
UCUDNN_MATH_WITHOUT_GRADIENT(Acos, 7)
UCUDNN_MATH_WITHOUT_GRADIENT(Atan, 7)
UCUDNN_MATH_WITHOUT_GRADIENT(Sinh, 9)
UCUDNN_MATH_WITHOUT_GRADIENT(Cosh, 9)
UCUDNN_MATH_WITHOUT_GRADIENT(Asinh, 9)
UCUDNN_MATH_WITHOUT_GRADIENT(Acosh, 9)
UCUDNN_MATH_WITHOUT_GRADIENT(Atanh, 9)
#undef UCUDNN_MATH_WITHOUT_GRADIENT

}  // namespace ucudnn
