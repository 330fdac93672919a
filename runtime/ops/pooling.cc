// Descriptors of the pools: MaxPool, AveragePool (1-D and 2-D windows; 3-D ones are lowered at import into
// 2-D ones, Note [3-D pools as 2-D ones] in onnx_import/lowering/volumetric.h) and GlobalAveragePool,
// GlobalMaxPool (any spatial rank).
// Window pools: X [N, C, spatial...] → Y [N, C, out...] with the geometry of
// window_geometry.h. MaxPool's optional Indices output (1-D and 2-D windows; int64, opset 8 on): the flat
// index of each maximum in X taken as NCHW, the spatial position row-major (storage_order 0) or column-major
// (1: h + w·H), as ONNX Runtime and PyTorch count it; MaxUnpool reads it (onnx_import/lowering/max_unpool.h).
// Gradient rules: MaxPoolGrad and AveragePoolGrad (runtime/ops/pooling_grad.cc) with the forward
// node's attributes; the global pools as window pools whose kernel is the whole spatial extent (a 3-D
// GlobalAveragePool: dY scaled and Expanded; a 3-D GlobalMaxPool is refused).
#include "runtime/core/bytes.h"
#include "runtime/ops/gradient.h"
#include "runtime/ops/op_descriptor.h"
#include "runtime/ops/window_geometry.h"

namespace ucudnn {

namespace {

Status infer_window_pool(InferContext& ctx) {
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(0, {DType::kFloat32}));
  const Shape& x = ctx.input(0).shape;
  if (ctx.num_outputs() > 1 && x.size() > 4)
    return ctx.unsupported_error("the Indices output of a 3-D MaxPool is not supported (1-D and 2-D are)");
  if (x.size() < 3) return ctx.error("X must have rank >= 3 ([N, C, spatial...]), got rank " + std::to_string(x.size()));
  if (x.size() > 5)
    return ctx.unsupported_error(std::to_string(x.size() - 2) + "-D pooling; ucudnn supports 1-D to 3-D");
  if (!ctx.attrs().has("kernel_shape")) return ctx.error("the kernel_shape attribute is required");
  const std::vector<int64_t>& kernel = ctx.attrs().get_ints("kernel_shape");
  const bool ceil_mode = ctx.attrs().has("ceil_mode") && ctx.attrs().get_int("ceil_mode") != 0;
  auto geometry = compute_window_geometry(ctx.attrs(), Shape(x.begin() + 2, x.end()), kernel, ceil_mode);
  if (!geometry) return ctx.error(geometry.status().message());
  Shape y = {x[0], x[1]};
  y.insert(y.end(), geometry->output.begin(), geometry->output.end());
  if (ctx.num_outputs() > 1) ctx.set_output(1, DType::kInt64, y);
  ctx.set_output(0, DType::kFloat32, std::move(y));
  return Status::ok();
}

Status infer_global_pool(InferContext& ctx) {
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(0, {DType::kFloat32}));
  const Shape& x = ctx.input(0).shape;
  if (x.size() < 3) return ctx.error("X must have rank >= 3 ([N, C, spatial...]), got rank " + std::to_string(x.size()));
  for (size_t i = 2; i < x.size(); ++i)
    if (x[i] == 0) return ctx.error("cannot pool over an empty spatial axis");
  Shape y(x.size(), 1);
  y[0] = x[0];
  y[1] = x[1];
  ctx.set_output(0, DType::kFloat32, std::move(y));
  return Status::ok();
}

// One comparison or addition per window element.
int64_t window_pool_flops(const InferContext& ctx) {
  return saturating_mul(shape_numel(ctx.output(0).shape), saturating_numel(ctx.attrs().get_ints("kernel_shape")));
}

int64_t global_pool_flops(const InferContext& ctx) { return shape_numel(ctx.input(0).shape); }

std::vector<AttrSpec> window_attrs(bool average) {
  std::vector<AttrSpec> attrs = {attr_string("auto_pad", "NOTSET"), attr_int("ceil_mode", 0),
                                 attr_optional("dilations", ir::AttrType::kInts),
                                 attr_required("kernel_shape", ir::AttrType::kInts),
                                 attr_optional("pads", ir::AttrType::kInts),
                                 attr_optional("strides", ir::AttrType::kInts)};
  if (average) attrs.push_back(attr_int("count_include_pad", 0));
  else attrs.push_back(attr_int("storage_order", 0));
  return attrs;
}

// ---- gradient rules ----------------------------------------------------------

// The gradient flowing into Y when X needs one, else kNoValue (the rule emits nothing).
ir::ValueId pool_output_grad(const GradientContext& ctx) {
  return ctx.needs_input_grad(0) ? ctx.output_grad(0) : ir::kNoValue;
}

// dX = MaxPoolGrad(dY, X) with `attrs` (MaxPool's).
Status emit_max_pool_grad(GradientContext& ctx, ir::ValueId dy, ir::Attributes attrs) {
  UCUDNN_ASSIGN_OR_RETURN(ir::ValueId dx, ctx.emit1(OpKind::kMaxPoolGrad, {dy, ctx.input(0)}, std::move(attrs)));
  return ctx.add_input_grad(0, dx);
}

// dX = AveragePoolGrad(dY) with `attrs` (AveragePool's) and input_shape = X's shape.
Status emit_average_pool_grad(GradientContext& ctx, ir::ValueId dy, ir::Attributes attrs) {
  const Shape& x = ctx.value(ctx.input(0)).shape;
  attrs.set("input_shape", std::vector<int64_t>(x.begin(), x.end()));
  UCUDNN_ASSIGN_OR_RETURN(ir::ValueId dx, ctx.emit1(OpKind::kAveragePoolGrad, {dy}, std::move(attrs)));
  return ctx.add_input_grad(0, dx);
}

Status max_pool_gradient(GradientContext& ctx) {
  if (ctx.node().outputs.size() > 1) return ctx.unsupported("MaxPool's Indices output is not differentiated");
  const ir::ValueId dy = pool_output_grad(ctx);
  if (dy == ir::kNoValue) return Status::ok();
  return emit_max_pool_grad(ctx, dy, ctx.node().attrs);
}

Status average_pool_gradient(GradientContext& ctx) {
  const ir::ValueId dy = pool_output_grad(ctx);
  if (dy == ir::kNoValue) return Status::ok();
  return emit_average_pool_grad(ctx, dy, ctx.node().attrs);
}

// A global pool's attributes as a window pool's: the kernel is X's spatial extent (1-D or 2-D, as the
// window pools; larger ranks are refused).
Expected<ir::Attributes> global_pool_window(const GradientContext& ctx) {
  const Shape& x = ctx.value(ctx.input(0)).shape;
  if (x.size() > 4)
    return ctx.unsupported(std::to_string(x.size() - 2) + "-D global pooling (the backward pools are 1-D and 2-D)");
  ir::Attributes attrs;
  attrs.set("kernel_shape", std::vector<int64_t>(x.begin() + 2, x.end()));
  return attrs;
}

// dX = dY / (the spatial extent's size) at every position: an AveragePoolGrad over the whole extent for 1-D
// and 2-D X; for 3-D X (the window pools' backward ops are 1-D and 2-D) an Expand of dY scaled.
Status global_average_pool_gradient(GradientContext& ctx) {
  const ir::ValueId dy = pool_output_grad(ctx);
  if (dy == ir::kNoValue) return Status::ok();
  const Shape x = ctx.value(ctx.input(0)).shape;  // a copy: emitting nodes may move the graph's values
  if (x.size() > 4) {
    const float scale = 1.0f / static_cast<float>(shape_numel(Shape(x.begin() + 2, x.end())));
    UCUDNN_ASSIGN_OR_RETURN(ir::ValueId scaled, ctx.emit1(OpKind::kMul, {dy, ctx.float_constant(scale, "scale")}));
    UCUDNN_ASSIGN_OR_RETURN(ir::ValueId dx, ctx.emit1(OpKind::kExpand, {scaled, ctx.int64_constant(x, "x_shape")}));
    return ctx.add_input_grad(0, dx);
  }
  UCUDNN_ASSIGN_OR_RETURN(ir::Attributes attrs, global_pool_window(ctx));
  return emit_average_pool_grad(ctx, dy, std::move(attrs));
}

Status global_max_pool_gradient(GradientContext& ctx) {
  const ir::ValueId dy = pool_output_grad(ctx);
  if (dy == ir::kNoValue) return Status::ok();
  UCUDNN_ASSIGN_OR_RETURN(ir::Attributes attrs, global_pool_window(ctx));
  return emit_max_pool_grad(ctx, dy, std::move(attrs));
}

}  // namespace

const OpDescriptor& describe_MaxPool() {
  static const OpDescriptor d{.kind = OpKind::kMaxPool,
                              .max_outputs = 2,
                              .min_opset = 1,
                              .attrs = window_attrs(false),
                              .infer = infer_window_pool,
                              .flops = window_pool_flops,
                              .gradient = max_pool_gradient};
  return d;
}

const OpDescriptor& describe_AveragePool() {
  static const OpDescriptor d{.kind = OpKind::kAveragePool,
                              .min_opset = 1,
                              .attrs = window_attrs(true),
                              .infer = infer_window_pool,
                              .flops = window_pool_flops,
                              .gradient = average_pool_gradient};
  return d;
}

const OpDescriptor& describe_GlobalAveragePool() {
  static const OpDescriptor d{.kind = OpKind::kGlobalAveragePool,
                              .min_opset = 1,
                              .infer = infer_global_pool,
                              .flops = global_pool_flops,
                              .gradient = global_average_pool_gradient};
  return d;
}

const OpDescriptor& describe_GlobalMaxPool() {
  static const OpDescriptor d{.kind = OpKind::kGlobalMaxPool,
                              .min_opset = 1,
                              .infer = infer_global_pool,
                              .flops = global_pool_flops,
                              .gradient = global_max_pool_gradient};
  return d;
}

}  // namespace ucudnn
