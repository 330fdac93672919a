// Descriptors of the backward convolutions the training graph adds (internal ops, docs/TRAINING.md):
//
//   ConvGradData   (dY [N, K, out...], W [K, C/group, kernel...]) → dX [N, C, in...]
//   ConvGradFilter (X [N, C, in...], dY [N, K, out...])           → dW [K, C/group, kernel...]
//
// Attributes: Conv's (kernel_shape, pads, strides, dilations, group; auto_pad must be NOTSET — Conv's
// gradient rule resolves it to explicit pads) plus the shape of the tensor the op computes the
// gradient of, which the inputs do not fix: `input_shape` (X's full-batch shape; dX takes dY's batch,
// so a micro-batch call gets its own N) or `filter_shape` (W's). The shape rule checks that dY is
// exactly what Conv would output for that X and W. 1-D and 2-D, as Conv.
// FLOPs: the forward convolution's, 2 · numel(dY) · (C/group) · prod(kernel).
// Gradient of ConvGradData (a ConvTranspose, Note [ConvTranspose as ConvGradData]): Z = ConvGradData(A, W)
// is the transposed convolution, so dA = Conv(dZ, W) and dW = ConvGradFilter(dZ, A), with the same
// pads, strides, dilations and group.
#include "runtime/core/bytes.h"
#include "runtime/ops/gradient.h"
#include "runtime/ops/op_descriptor.h"
#include "runtime/ops/window_geometry.h"

namespace ucudnn {

namespace {

// The attributes of both directions: Conv's, and the one naming the shape of X or W.
std::vector<AttrSpec> conv_grad_attrs(const char* shape_attr) {
  return {attr_string("auto_pad", "NOTSET"), attr_optional("dilations", ir::AttrType::kInts),
          attr_int("group", 1),             attr_optional("kernel_shape", ir::AttrType::kInts),
          attr_optional("pads", ir::AttrType::kInts), attr_optional("strides", ir::AttrType::kInts),
          attr_required(shape_attr, ir::AttrType::kInts)};
}

// Checks that X [N', C, in...], W [K, C/group, kernel...] and dY [N, K, out...] are a Conv's
// input, weight and output (except X's batch N', which the caller sets).
Status check_conv_shapes(const InferContext& ctx, const Shape& x, const Shape& w, const Shape& dy) {
  if (ctx.attrs().get_string("auto_pad") != "NOTSET")
    return ctx.error("auto_pad '" + ctx.attrs().get_string("auto_pad") +
                     "': the backward convolutions take explicit pads (auto_pad NOTSET)");
  if (x.size() < 3 || w.size() != x.size() || dy.size() != x.size())
    return ctx.error("X " + shape_to_string(x) + ", W " + shape_to_string(w) + " and dY " + shape_to_string(dy) +
                     " must have one rank >= 3 ([N, C, spatial...])");
  if (x.size() > 4)
    return ctx.unsupported_error(std::to_string(x.size() - 2) + "-D convolution; ucudnn supports 1-D and 2-D");
  const int64_t group = ctx.attrs().get_int("group");
  if (group < 1) return ctx.error("group " + std::to_string(group) + " must be >= 1");
  if (x[1] % group != 0 || w[0] % group != 0 || w[1] * group != x[1])
    return ctx.error("X " + shape_to_string(x) + " and W " + shape_to_string(w) + " do not fit group " +
                     std::to_string(group) + " (X's channels = W's dim 1 x group, W's dim 0 divisible by group)");
  const std::vector<int64_t> kernel(w.begin() + 2, w.end());
  if (ctx.attrs().has("kernel_shape") && ctx.attrs().get_ints("kernel_shape") != kernel)
    return ctx.error("kernel_shape " + shape_to_string(ctx.attrs().get_ints("kernel_shape")) +
                     " does not match W's spatial dims " + shape_to_string(kernel));
  auto geometry = compute_window_geometry(ctx.attrs(), Shape(x.begin() + 2, x.end()), kernel, /*ceil_mode=*/false);
  if (!geometry) return ctx.error(geometry.status().message());
  Shape expected = {dy[0], w[0]};
  expected.insert(expected.end(), geometry->output.begin(), geometry->output.end());
  if (dy != expected)
    return ctx.error("dY is " + shape_to_string(dy) + " but Conv of X " + shape_to_string(x) + " and W " +
                     shape_to_string(w) + " gives " + shape_to_string(expected));
  return Status::ok();
}

Status check_shape_attr(const InferContext& ctx, const char* name) {
  for (int64_t d : ctx.attrs().get_ints(name))
    if (d < 0) return ctx.error(std::string(name) + " " + shape_to_string(ctx.attrs().get_ints(name)) + " has a negative dim");
  return Status::ok();
}

// dX: input_shape with dY's batch.
Status infer_conv_grad_data(InferContext& ctx) {
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(0, {DType::kFloat32}));
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(1, {DType::kFloat32}));
  UCUDNN_RETURN_IF_ERROR(check_shape_attr(ctx, "input_shape"));
  const Shape& dy = ctx.input(0).shape;
  Shape x = ctx.attrs().get_ints("input_shape");
  if (!x.empty() && !dy.empty()) x[0] = dy[0];
  UCUDNN_RETURN_IF_ERROR(check_conv_shapes(ctx, x, ctx.input(1).shape, dy));
  ctx.set_output(0, DType::kFloat32, std::move(x));
  return Status::ok();
}

// dW: filter_shape.
Status infer_conv_grad_filter(InferContext& ctx) {
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(0, {DType::kFloat32}));
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(1, {DType::kFloat32}));
  UCUDNN_RETURN_IF_ERROR(check_shape_attr(ctx, "filter_shape"));
  const Shape& x = ctx.input(0).shape;
  const Shape& dy = ctx.input(1).shape;
  if (!x.empty() && !dy.empty() && x[0] != dy[0])
    return ctx.error("X " + shape_to_string(x) + " and dY " + shape_to_string(dy) + " differ in batch size");
  Shape w = ctx.attrs().get_ints("filter_shape");
  UCUDNN_RETURN_IF_ERROR(check_conv_shapes(ctx, x, w, dy));
  ctx.set_output(0, DType::kFloat32, std::move(w));
  return Status::ok();
}

// 2 · numel(dY) · prod(W's dims after the first): the forward convolution's FLOPs.
int64_t conv_grad_flops(const Shape& dy, const Shape& w) {
  return saturating_mul(saturating_mul(int64_t{2}, shape_numel(dy)), shape_numel(Shape(w.begin() + 1, w.end())));
}

int64_t conv_grad_data_flops(const InferContext& ctx) { return conv_grad_flops(ctx.input(0).shape, ctx.input(1).shape); }

int64_t conv_grad_filter_flops(const InferContext& ctx) {
  return conv_grad_flops(ctx.input(1).shape, ctx.output(0).shape);
}

Status conv_grad_data_gradient(GradientContext& ctx) {
  const ir::ValueId dz = ctx.output_grad(0);
  if (dz == ir::kNoValue) return Status::ok();
  ir::Attributes conv_attrs = ctx.node().attrs;  // Conv's attributes: the node's, less input_shape
  conv_attrs.erase("input_shape");
  if (ctx.needs_input_grad(0)) {
    UCUDNN_ASSIGN_OR_RETURN(ir::ValueId da, ctx.emit1(OpKind::kConv, {dz, ctx.input(1)}, conv_attrs));
    UCUDNN_RETURN_IF_ERROR(ctx.add_input_grad(0, da));
  }
  if (ctx.needs_input_grad(1)) {
    const Shape w = ctx.shape_of(ctx.input(1));
    ir::Attributes filter_attrs = conv_attrs;
    filter_attrs.set("filter_shape", std::vector<int64_t>(w.begin(), w.end()));
    UCUDNN_ASSIGN_OR_RETURN(ir::ValueId dw,
                            ctx.emit1(OpKind::kConvGradFilter, {dz, ctx.input(0)}, std::move(filter_attrs)));
    UCUDNN_RETURN_IF_ERROR(ctx.add_input_grad(1, dw));
  }
  return Status::ok();
}

}  // namespace

const OpDescriptor& describe_ConvGradData() {
  static const OpDescriptor d{.kind = OpKind::kConvGradData,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .attrs = conv_grad_attrs("input_shape"),
                              .infer = infer_conv_grad_data,
                              .flops = conv_grad_data_flops,
                              .internal = true,
                              .gradient = conv_grad_data_gradient};
  return d;
}

const OpDescriptor& describe_ConvGradFilter() {
  static const OpDescriptor d{.kind = OpKind::kConvGradFilter,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .attrs = conv_grad_attrs("filter_shape"),
                              .infer = infer_conv_grad_filter,
                              .flops = conv_grad_filter_flops,
                              .internal = true};
  return d;
}

}  // namespace ucudnn
