// Descriptors of the backward pools the training graph adds (internal ops, docs/TRAINING.md):
//
//   MaxPoolGrad     (dY [N, C, out...], X [N, C, in...]) → dX [N, C, in...]
//   AveragePoolGrad (dY [N, C, out...])                  → dX [N, C, in...]
//
// Attributes: the forward pool's, copied by its gradient rule (auto_pad, ceil_mode, dilations,
// kernel_shape, pads, strides; storage_order for MaxPool, count_include_pad for AveragePool), and
// for AveragePoolGrad `input_shape` (X's shape: dY alone does not fix it; dX takes dY's batch).
// The shape rule checks that dY is exactly what the forward pool outputs for that X.
// 1-D and 2-D windows, as the forward pools. MaxPoolGrad gives each window's gradient to the tap the
// forward max picks (the first maximum in row-major window order, a NaN when the window has one).
// FLOPs: one comparison or addition per window tap, as the forward pools.
#include "runtime/core/bytes.h"
#include "runtime/ops/op_descriptor.h"
#include "runtime/ops/window_geometry.h"

namespace ucudnn {

namespace {

// Checks that dY is the output of the forward pool over X of shape `x` with the node's attributes.
Status check_pool_shapes(const InferContext& ctx, const Shape& x, const Shape& dy) {
  if (x.size() < 3) return ctx.error("X must have rank >= 3 ([N, C, spatial...]), got " + shape_to_string(x));
  if (x.size() > 4)
    return ctx.unsupported_error(std::to_string(x.size() - 2) + "-D pooling; ucudnn supports 1-D and 2-D");
  if (!ctx.attrs().has("kernel_shape")) return ctx.error("the kernel_shape attribute is required");
  const bool ceil_mode = ctx.attrs().has("ceil_mode") && ctx.attrs().get_int("ceil_mode") != 0;
  auto geometry = compute_window_geometry(ctx.attrs(), Shape(x.begin() + 2, x.end()),
                                          ctx.attrs().get_ints("kernel_shape"), ceil_mode);
  if (!geometry) return ctx.error(geometry.status().message());
  Shape expected = {x[0], x[1]};
  expected.insert(expected.end(), geometry->output.begin(), geometry->output.end());
  if (dy != expected)
    return ctx.error("dY " + shape_to_string(dy) + " is not the pool's output " + shape_to_string(expected) +
                     " for X " + shape_to_string(x));
  return Status::ok();
}

Status infer_max_pool_grad(InferContext& ctx) {
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(0, {DType::kFloat32}));
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(1, {DType::kFloat32}));
  const Shape& x = ctx.input(1).shape;
  UCUDNN_RETURN_IF_ERROR(check_pool_shapes(ctx, x, ctx.input(0).shape));
  ctx.set_output(0, DType::kFloat32, x);
  return Status::ok();
}

Status infer_average_pool_grad(InferContext& ctx) {
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(0, {DType::kFloat32}));
  const Shape& dy = ctx.input(0).shape;
  if (!ctx.attrs().has("input_shape")) return ctx.error("the input_shape attribute is required");
  Shape x = ctx.attrs().get_ints("input_shape");
  for (int64_t d : x)
    if (d < 0) return ctx.error("input_shape " + shape_to_string(x) + " has a negative dimension");
  if (!dy.empty() && !x.empty()) x[0] = dy[0];  // dX follows dY's batch
  UCUDNN_RETURN_IF_ERROR(check_pool_shapes(ctx, x, dy));
  ctx.set_output(0, DType::kFloat32, std::move(x));
  return Status::ok();
}

int64_t pool_grad_flops(const InferContext& ctx) {
  return saturating_mul(shape_numel(ctx.input(0).shape), saturating_numel(ctx.attrs().get_ints("kernel_shape")));
}

std::vector<AttrSpec> pool_grad_attrs(bool average) {
  std::vector<AttrSpec> attrs = {attr_string("auto_pad", "NOTSET"), attr_int("ceil_mode", 0),
                                 attr_optional("dilations", ir::AttrType::kInts),
                                 attr_required("kernel_shape", ir::AttrType::kInts),
                                 attr_optional("pads", ir::AttrType::kInts),
                                 attr_optional("strides", ir::AttrType::kInts)};
  if (average) {
    attrs.push_back(attr_int("count_include_pad", 0));
    attrs.push_back(attr_required("input_shape", ir::AttrType::kInts));
  } else {
    attrs.push_back(attr_int("storage_order", 0));
  }
  return attrs;
}

}  // namespace

const OpDescriptor& describe_MaxPoolGrad() {
  static const OpDescriptor d{.kind = OpKind::kMaxPoolGrad,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .attrs = pool_grad_attrs(false),
                              .infer = infer_max_pool_grad,
                              .flops = pool_grad_flops,
                              .internal = true};
  return d;
}

const OpDescriptor& describe_AveragePoolGrad() {
  static const OpDescriptor d{.kind = OpKind::kAveragePoolGrad,
                              .attrs = pool_grad_attrs(true),
                              .infer = infer_average_pool_grad,
                              .flops = pool_grad_flops,
                              .internal = true};
  return d;
}

}  // namespace ucudnn
