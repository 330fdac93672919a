// Descriptor of Conv: X [N, C, spatial...], W [M, C/group, kernel...], optional
// B [M] → Y [N, M, out...]. 1-D and 2-D convolutions; 3-D is Unsupported.
// Attributes (latest opset): auto_pad "NOTSET", dilations, group 1, kernel_shape,
// pads, strides; the rank-dependent ones are optional (read with has()).
// FLOPs: 2 · N · M · prod(out) · (C/group) · prod(kernel).
#include "runtime/core/bytes.h"
#include "runtime/ops/op_descriptor.h"
#include "runtime/ops/window_geometry.h"

namespace ucudnn {

namespace {

Status infer_conv(InferContext& ctx) {
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(0, {DType::kFloat32}));
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(1, {DType::kFloat32}));
  if (ctx.has_input(2)) UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(2, {DType::kFloat32}));
  const Shape& x = ctx.input(0).shape;
  const Shape& w = ctx.input(1).shape;
  if (x.size() < 3) return ctx.error("X must have rank >= 3 ([N, C, spatial...]), got rank " + std::to_string(x.size()));
  if (w.size() != x.size())
    return ctx.error("W has rank " + std::to_string(w.size()) + " but X has rank " + std::to_string(x.size()));
  if (x.size() > 4)
    return ctx.unsupported_error(std::to_string(x.size() - 2) + "-D convolution; ucudnn supports 1-D and 2-D");
  const int64_t group = ctx.attrs().has("group") ? ctx.attrs().get_int("group") : 1;
  const int64_t channels = x[1], filters = w[0];
  if (group < 1) return ctx.error("group " + std::to_string(group) + " must be >= 1");
  if (channels % group != 0)
    return ctx.error("group " + std::to_string(group) + " does not divide the input channels " + std::to_string(channels));
  if (filters % group != 0)
    return ctx.error("group " + std::to_string(group) + " does not divide the output channels " + std::to_string(filters));
  if (w[1] * group != channels)
    return ctx.error("channel mismatch: X has " + std::to_string(channels) + " channels but W expects " +
                     std::to_string(w[1]) + " per group x " + std::to_string(group) + " groups");
  const std::vector<int64_t> kernel(w.begin() + 2, w.end());
  if (ctx.attrs().has("kernel_shape") && ctx.attrs().get_ints("kernel_shape") != kernel)
    return ctx.error("kernel_shape " + shape_to_string(ctx.attrs().get_ints("kernel_shape")) +
                     " does not match W's spatial dims " + shape_to_string(kernel));
  if (ctx.has_input(2) && ctx.input(2).shape != Shape{filters})
    return ctx.error("B must have shape [" + std::to_string(filters) + "], got " + shape_to_string(ctx.input(2).shape));
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
      .flops = conv_flops};
  return d;
}

}  // namespace ucudnn
