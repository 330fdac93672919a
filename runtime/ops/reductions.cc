// Descriptors of the Reduce* family (float32; reduce_kind.h says what each computes), ArgMax, ArgMin,
// Softmax and LogSoftmax, and the gradient rules of ReduceMean, ReduceSum and the softmaxes.
//
// Reduce* in their opset 18 form (ReduceSum's from opset 13): optional constant `axes` input (the
// importer turns older `axes` attributes into it), keepdims, noop_with_empty_axes.
// ArgMax/ArgMin: float32 X → int64 indices along `axis` (default 0), keepdims, select_last_index (the
// last of equal extremes instead of the first).
// Softmax/LogSoftmax: `axis` is optional; its default and meaning depend on
// the opset. Note [softmax axis by opset]: before opset 13 the input is
// coerced to 2-D at `axis` (default 1) and normalised over all trailing dims
// flattened together; from opset 13 it is normalised over the one dim `axis`
// (default -1). The CPU kernel reads node.opset the same way.
#include <optional>
#include <set>

#include "runtime/core/bytes.h"
#include "runtime/ops/gradient.h"
#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {

Status reduce_infer(InferContext& ctx) {
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(0, {DType::kFloat32}));
  const Shape& in = ctx.input(0).shape;
  const int64_t rank = static_cast<int64_t>(in.size());
  const bool keepdims = ctx.attrs().get_int("keepdims") != 0;
  const bool noop = ctx.attrs().get_int("noop_with_empty_axes") != 0;
  std::vector<bool> reduce(in.size(), false);
  std::vector<int64_t> axes;
  if (ctx.has_input(1)) {
    UCUDNN_RETURN_IF_ERROR(ctx.expect_constant(1, "axes"));
    auto v = ctx.input(1).constant->to_int64_vector();
    if (!v) return ctx.error("axes: " + v.status().message());
    axes = std::move(v).value();
  }
  if (axes.empty()) {
    if (noop) {
      ctx.set_output(0, DType::kFloat32, in);
      return Status::ok();
    }
    reduce.assign(in.size(), true);
  }
  for (int64_t a : axes) {
    const int64_t n = normalize_axis(a, rank);
    if (n < 0) return ctx.error("axis " + std::to_string(a) + " is out of range for rank " + std::to_string(rank));
    if (reduce[n]) return ctx.error("axis " + std::to_string(a) + " is repeated");
    reduce[n] = true;
  }
  Shape out;
  for (size_t d = 0; d < in.size(); ++d) {
    if (!reduce[d]) out.push_back(in[d]);
    else if (keepdims) out.push_back(1);
  }
  ctx.set_output(0, DType::kFloat32, std::move(out));
  return Status::ok();
}

Status arg_extreme_infer(InferContext& ctx) {
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(0, {DType::kFloat32}));
  const Shape& in = ctx.input(0).shape;
  const int64_t rank = static_cast<int64_t>(in.size());
  const int64_t axis = ctx.attrs().get_int("axis");
  const int64_t a = normalize_axis(axis, rank);
  if (rank == 0 || a < 0)
    return ctx.error("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  if (in[static_cast<size_t>(a)] == 0) return ctx.error("cannot take the index of an extreme over an empty axis");
  Shape out = in;
  if (ctx.attrs().get_int("keepdims") != 0) out[static_cast<size_t>(a)] = 1;
  else out.erase(out.begin() + a);
  ctx.set_output(0, DType::kInt64, std::move(out));
  return Status::ok();
}

Status softmax_infer(InferContext& ctx) {
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(0, {DType::kFloat32}));
  const Shape& in = ctx.input(0).shape;
  const int64_t rank = static_cast<int64_t>(in.size());
  const int64_t axis = ctx.attrs().has("axis") ? ctx.attrs().get_int("axis") : (ctx.opset() < 13 ? 1 : -1);
  if (rank == 0) return ctx.error("input must have rank >= 1");
  if (normalize_axis(axis, rank) < 0)
    return ctx.error("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  ctx.set_output(0, DType::kFloat32, in);
  return Status::ok();
}

int64_t input_numel(const InferContext& ctx) { return shape_numel(ctx.input(0).shape); }
int64_t five_flops_per_element(const InferContext& ctx) {
  return saturating_mul(int64_t{5}, shape_numel(ctx.output(0).shape));
}

// Per dim of X, whether a ReduceMean/ReduceSum node reduces it (none for
// noop_with_empty_axes without axes, all for no axes otherwise).
Expected<std::vector<bool>> reduced_dims(GradientContext& ctx) {
  const Shape& in = ctx.value(ctx.input(0)).shape;
  const int64_t rank = static_cast<int64_t>(in.size());
  std::vector<int64_t> axes;
  if (ctx.input(1) != ir::kNoValue) {
    const std::optional<Tensor>& constant = ctx.value(ctx.input(1)).constant;
    if (!constant) return ctx.unsupported("axes computed at run time");
    UCUDNN_ASSIGN_OR_RETURN(axes, constant->to_int64_vector());
  }
  if (axes.empty()) return std::vector<bool>(in.size(), ctx.node().attrs.get_int("noop_with_empty_axes") == 0);
  std::vector<bool> reduce(in.size(), false);
  for (int64_t a : axes) reduce[static_cast<size_t>(normalize_axis(a, rank))] = true;  // checked by the shape rule
  return reduce;
}

// dX = Expand(Reshape(dY, X's shape with reduced dims 1), X's shape) · (1/count for a mean).
Status reduce_gradient(GradientContext& ctx, bool mean) {
  const ir::ValueId dy = ctx.output_grad(0);
  if (dy == ir::kNoValue || !ctx.needs_input_grad(0)) return Status::ok();
  const Shape& in = ctx.value(ctx.input(0)).shape;
  UCUDNN_ASSIGN_OR_RETURN(std::vector<bool> reduce, reduced_dims(ctx));
  Shape kept = in;
  int64_t count = 1;
  for (size_t d = 0; d < in.size(); ++d)
    if (reduce[d]) {
      kept[d] = 1;
      count *= in[d];
    }
  UCUDNN_ASSIGN_OR_RETURN(ir::ValueId grad, ctx.reshape(dy, kept));
  if (kept != in) {
    UCUDNN_ASSIGN_OR_RETURN(grad, ctx.emit1(OpKind::kExpand, {grad, ctx.int64_constant(in, "shape")}));
  }
  if (mean && count != 1) {
    const float scale = count == 0 ? 0.0f : static_cast<float>(1.0 / static_cast<double>(count));
    UCUDNN_ASSIGN_OR_RETURN(grad, ctx.emit1(OpKind::kMul, {grad, ctx.float_constant(scale, "scale")}));
  }
  return ctx.add_input_grad(0, grad);
}

Status reduce_mean_gradient(GradientContext& ctx) { return reduce_gradient(ctx, true); }
Status reduce_sum_gradient(GradientContext& ctx) { return reduce_gradient(ctx, false); }

// dX = SoftmaxGrad/LogSoftmaxGrad(dY, Y) over the forward's axis. Before opset 13 the
// forward normalises the trailing dims flattened (Note [softmax axis by opset]), so dY
// and Y are viewed as [outer, rest] and the result reshaped back.
Status normalized_exp_gradient(GradientContext& ctx, OpKind grad_op) {
  const ir::ValueId dy = ctx.output_grad(0);
  if (dy == ir::kNoValue || !ctx.needs_input_grad(0)) return Status::ok();
  const Shape& in = ctx.value(ctx.input(0)).shape;
  const bool old = ctx.node().opset < 13;
  const ir::Attributes& attrs = ctx.node().attrs;
  const int64_t axis = normalize_axis(attrs.has("axis") ? attrs.get_int("axis") : (old ? 1 : -1),
                                      static_cast<int64_t>(in.size()));  // checked by the shape rule
  ir::ValueId y = ctx.output(0), grad = dy;
  ir::Attributes grad_attrs;
  grad_attrs.set("axis", axis);
  if (old) {
    const Shape flat = {shape_numel(Shape(in.begin(), in.begin() + axis)),
                        shape_numel(Shape(in.begin() + axis, in.end()))};
    UCUDNN_ASSIGN_OR_RETURN(y, ctx.reshape(y, flat));
    UCUDNN_ASSIGN_OR_RETURN(grad, ctx.reshape(grad, flat));
    grad_attrs.set("axis", int64_t{1});
  }
  UCUDNN_ASSIGN_OR_RETURN(ir::ValueId dx, ctx.emit1(grad_op, {grad, y}, std::move(grad_attrs)));
  UCUDNN_ASSIGN_OR_RETURN(dx, ctx.reshape(dx, in));
  return ctx.add_input_grad(0, dx);
}

Status softmax_gradient(GradientContext& ctx) { return normalized_exp_gradient(ctx, OpKind::kSoftmaxGrad); }
Status log_softmax_gradient(GradientContext& ctx) { return normalized_exp_gradient(ctx, OpKind::kLogSoftmaxGrad); }

}  // namespace

const OpDescriptor& describe_ReduceMean() {
  static const OpDescriptor d{.kind = OpKind::kReduceMean,
                              .min_inputs = 1,
                              .max_inputs = 2,
                              .min_opset = 1,
                              .attrs = {attr_int("keepdims", 1), attr_int("noop_with_empty_axes", 0)},
                              .infer = reduce_infer,
                              .flops = input_numel,
                              .gradient = reduce_mean_gradient};
  return d;
}

const OpDescriptor& describe_ReduceSum() {
  static const OpDescriptor d{.kind = OpKind::kReduceSum,
                              .min_inputs = 1,
                              .max_inputs = 2,
                              .min_opset = 1,  // axes attribute before opset 13: onnx_import/upgrade.cc
                              .attrs = {attr_int("keepdims", 1), attr_int("noop_with_empty_axes", 0)},
                              .infer = reduce_infer,
                              .flops = input_numel,
                              .gradient = reduce_sum_gradient};
  return d;
}

// The Reduce* ops without a gradient rule: one descriptor each, alike but for the kind.
#define UCUDNN_REDUCTION(name)                                                                             \
  const OpDescriptor& describe_##name() {                                                                  \
    static const OpDescriptor d{.kind = OpKind::k##name,                                                   \
                                .min_inputs = 1,                                                           \
                                .max_inputs = 2,                                                           \
                                .min_opset = 1, /* axes attribute before opset 18: onnx_import/upgrade.cc */ \
                                .attrs = {attr_int("keepdims", 1), attr_int("noop_with_empty_axes", 0)},   \
                                .infer = reduce_infer,                                                     \
                                .flops = input_numel};                                                     \
    return d;                                                                                              \
  }
UCUDNN_REDUCTION(ReduceMax)
UCUDNN_REDUCTION(ReduceMin)
UCUDNN_REDUCTION(ReduceProd)
UCUDNN_REDUCTION(ReduceL1)
UCUDNN_REDUCTION(ReduceL2)
UCUDNN_REDUCTION(ReduceSumSquare)
UCUDNN_REDUCTION(ReduceLogSum)
UCUDNN_REDUCTION(ReduceLogSumExp)
#undef UCUDNN_REDUCTION

const OpDescriptor& describe_ArgMax() {
  static const OpDescriptor d{.kind = OpKind::kArgMax,
                              .min_opset = 1,
                              .attrs = {attr_int("axis", 0), attr_int("keepdims", 1), attr_int("select_last_index", 0)},
                              .infer = arg_extreme_infer,
                              .flops = input_numel};
  return d;
}

const OpDescriptor& describe_ArgMin() {
  static const OpDescriptor d{.kind = OpKind::kArgMin,
                              .min_opset = 1,
                              .attrs = {attr_int("axis", 0), attr_int("keepdims", 1), attr_int("select_last_index", 0)},
                              .infer = arg_extreme_infer,
                              .flops = input_numel};
  return d;
}

const OpDescriptor& describe_Softmax() {
  static const OpDescriptor d{.kind = OpKind::kSoftmax,
                              .min_opset = 1,
                              .attrs = {attr_optional("axis", ir::AttrType::kInt)},
                              .infer = softmax_infer,
                              .flops = five_flops_per_element,
                              .gradient = softmax_gradient};
  return d;
}

// 1 at the first maximum of each group Softmax normalises, 0 elsewhere; lowered at import
// (onnx_import/lowering/hardmax.h).
const OpDescriptor& describe_Hardmax() {
  static const OpDescriptor d{.kind = OpKind::kHardmax,
                              .min_opset = 1,
                              .attrs = {attr_optional("axis", ir::AttrType::kInt)},
                              .infer = softmax_infer,
                              .flops = input_numel};
  return d;
}

const OpDescriptor& describe_LogSoftmax() {
  static const OpDescriptor d{.kind = OpKind::kLogSoftmax,
                              .min_opset = 1,
                              .attrs = {attr_optional("axis", ir::AttrType::kInt)},
                              .infer = softmax_infer,
                              .flops = five_flops_per_element,
                              .gradient = log_softmax_gradient};
  return d;
}

}  // namespace ucudnn
