// Descriptor of Conv: X [N, C, spatial...], W [M, C/group, kernel...], optional
// B [M] → Y [N, M, out...]. 1-D and 2-D convolutions run as they are; 3-D ones are lowered at import into
// 2-D ones (Note [3-D convolution as 2-D ones], onnx_import/lowering/volumetric.h).
// Attributes (latest opset): auto_pad "NOTSET", dilations, group 1, kernel_shape,
// pads, strides; the rank-dependent ones are optional (read with has()).
// FLOPs: 2 · N · M · prod(out) · (C/group) · prod(kernel).
// Gradient: dX = ConvGradData(dY, W), dW = ConvGradFilter(X, dY) (runtime/ops/conv_grad.cc) with
// explicit pads, dB = ReduceSum(dY) over every axis but the channels.
#include "runtime/core/bytes.h"
#include "runtime/ir/fusion.h"
#include "runtime/ops/conv_checks.h"
#include "runtime/ops/gradient.h"
#include "runtime/ops/op_descriptor.h"
#include "runtime/ops/window_geometry.h"

namespace ucudnn {

namespace {

Status infer_conv(InferContext& ctx) {
  UCUDNN_ASSIGN_OR_RETURN(const int64_t group, checked_conv_group(ctx, "convolution"));
  const Shape& x = ctx.input(0).shape;
  const Shape& w = ctx.input(1).shape;
  const int64_t channels = x[1], filters = w[0];
  if (filters % group != 0)
    return ctx.error("group " + std::to_string(group) + " does not divide the output channels " + std::to_string(filters));
  if (w[1] * group != channels)
    return ctx.error("channel mismatch: X has " + std::to_string(channels) + " channels but W expects " +
                     std::to_string(w[1]) + " per group x " + std::to_string(group) + " groups");
  UCUDNN_ASSIGN_OR_RETURN(const std::vector<int64_t> kernel, checked_conv_kernel(ctx, filters));
  auto geometry = compute_window_geometry(ctx.attrs(), Shape(x.begin() + 2, x.end()), kernel, /*ceil_mode=*/false);
  if (!geometry) return ctx.error(geometry.status().message());
  Shape y = {x[0], filters};
  y.insert(y.end(), geometry->output.begin(), geometry->output.end());
  ctx.set_output(0, DType::kFloat32, std::move(y));
  return Status::ok();
}

int64_t conv_flops(const InferContext& ctx) {
  const Shape& w = ctx.input(1).shape;
  return saturating_mul(saturating_mul(int64_t{2}, shape_numel(ctx.output(0).shape)),
                        shape_numel(Shape(w.begin() + 1, w.end())));
}

// Conv's attributes for its backward ops: auto_pad resolved to the explicit pads the forward used
// (compute_window_geometry on X's shape, as infer_conv), and the rest spelled out.
Expected<ir::Attributes> backward_attrs(const GradientContext& ctx, const Shape& x, const Shape& w) {
  const std::vector<int64_t> kernel(w.begin() + 2, w.end());
  auto geometry = compute_window_geometry(ctx.node().attrs, Shape(x.begin() + 2, x.end()), kernel, false);
  if (!geometry) return ctx.unsupported(geometry.status().message());
  std::vector<int64_t> pads = geometry->pad_begin;
  pads.insert(pads.end(), geometry->pad_end.begin(), geometry->pad_end.end());
  ir::Attributes attrs;
  attrs.set("auto_pad", std::string("NOTSET"));
  attrs.set("kernel_shape", kernel);
  attrs.set("pads", std::move(pads));
  attrs.set("strides", geometry->stride);
  attrs.set("dilations", geometry->dilation);
  attrs.set("group", ctx.node().attrs.has("group") ? ctx.node().attrs.get_int("group") : int64_t{1});
  return attrs;
}

Status conv_gradient(GradientContext& ctx) {
  const ir::Node& node = ctx.node();
  if (const std::string activation = ir::fused_activation(node); !activation.empty())
    return ctx.unsupported("a fused activation '" + activation + "' (training runs no fusion passes)");
  if (ctx.input(ir::kConvResidualInput) != ir::kNoValue)
    return ctx.unsupported("a fused residual input (training runs no fusion passes)");
  const ir::ValueId dy = ctx.output_grad(0);
  if (dy == ir::kNoValue) return Status::ok();
  const Shape x = ctx.shape_of(ctx.input(0));  // copies: emit() appends values
  const Shape w = ctx.shape_of(ctx.input(1));
  UCUDNN_ASSIGN_OR_RETURN(ir::Attributes attrs, backward_attrs(ctx, x, w));
  if (ctx.needs_input_grad(0)) {
    ir::Attributes data_attrs = attrs;
    data_attrs.set("input_shape", std::vector<int64_t>(x.begin(), x.end()));
    UCUDNN_ASSIGN_OR_RETURN(ir::ValueId dx, ctx.emit1(OpKind::kConvGradData, {dy, ctx.input(1)}, std::move(data_attrs)));
    UCUDNN_RETURN_IF_ERROR(ctx.add_input_grad(0, dx));
  }
  if (ctx.needs_input_grad(1)) {
    ir::Attributes filter_attrs = attrs;
    filter_attrs.set("filter_shape", std::vector<int64_t>(w.begin(), w.end()));
    UCUDNN_ASSIGN_OR_RETURN(ir::ValueId dw,
                            ctx.emit1(OpKind::kConvGradFilter, {ctx.input(0), dy}, std::move(filter_attrs)));
    UCUDNN_RETURN_IF_ERROR(ctx.add_input_grad(1, dw));
  }
  if (ctx.needs_input_grad(2)) {
    std::vector<int64_t> axes = {0};
    for (size_t d = 2; d < x.size(); ++d) axes.push_back(static_cast<int64_t>(d));
    ir::Attributes sum_attrs;
    sum_attrs.set("keepdims", int64_t{0});
    UCUDNN_ASSIGN_OR_RETURN(ir::ValueId db, ctx.emit1(OpKind::kReduceSum, {dy, ctx.int64_constant(axes, "axes")},
                                                      std::move(sum_attrs)));
    UCUDNN_RETURN_IF_ERROR(ctx.add_input_grad(2, db));
  }
  return Status::ok();
}

}  // namespace

const OpDescriptor& describe_Conv() {
  static const OpDescriptor d{
      .kind = OpKind::kConv,
      .min_inputs = 2,
      .max_inputs = 3,
      .min_opset = 1,
      .attrs = {attr_string("auto_pad", "NOTSET"), attr_optional("dilations", ir::AttrType::kInts),
                attr_int("group", 1), attr_optional("kernel_shape", ir::AttrType::kInts),
                attr_optional("pads", ir::AttrType::kInts), attr_optional("strides", ir::AttrType::kInts)},
      .infer = infer_conv,
      .flops = conv_flops,
      .gradient = conv_gradient};
  return d;
}

}  // namespace ucudnn
