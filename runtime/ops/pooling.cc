// Descriptors of the pools: MaxPool, AveragePool (1-D and 2-D windows; 3-D is
// Unsupported) and GlobalAveragePool, GlobalMaxPool (any spatial rank).
// Window pools: X [N, C, spatial...] → Y [N, C, out...] with the geometry of
// window_geometry.h. MaxPool's optional Indices output is Unsupported.
#include "runtime/core/bytes.h"
#include "runtime/ops/op_descriptor.h"
#include "runtime/ops/window_geometry.h"

namespace ucudnn {

namespace {

Status infer_window_pool(InferContext& ctx) {
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(0, {DType::kFloat32}));
  if (ctx.num_outputs() > 1) return ctx.unsupported_error("the Indices output of MaxPool is not supported");
  const Shape& x = ctx.input(0).shape;
  if (x.size() < 3) return ctx.error("X must have rank >= 3 ([N, C, spatial...]), got rank " + std::to_string(x.size()));
  if (x.size() > 4)
    return ctx.unsupported_error(std::to_string(x.size() - 2) + "-D pooling; ucudnn supports 1-D and 2-D");
  if (!ctx.attrs().has("kernel_shape")) return ctx.error("the kernel_shape attribute is required");
  const std::vector<int64_t>& kernel = ctx.attrs().get_ints("kernel_shape");
  const bool ceil_mode = ctx.attrs().has("ceil_mode") && ctx.attrs().get_int("ceil_mode") != 0;
  auto geometry = compute_window_geometry(ctx.attrs(), Shape(x.begin() + 2, x.end()), kernel, ceil_mode);
  if (!geometry) return ctx.error(geometry.status().message());
  Shape y = {x[0], x[1]};
  y.insert(y.end(), geometry->output.begin(), geometry->output.end());
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

}  // namespace

const OpDescriptor& describe_MaxPool() {
  static const OpDescriptor d{.kind = OpKind::kMaxPool,
                              .max_outputs = 2,
                              .min_opset = 1,
                              .attrs = window_attrs(false),
                              .infer = infer_window_pool,
                              .flops = window_pool_flops};
  return d;
}

const OpDescriptor& describe_AveragePool() {
  static const OpDescriptor d{.kind = OpKind::kAveragePool,
                              .min_opset = 1,
                              .attrs = window_attrs(true),
                              .infer = infer_window_pool,
                              .flops = window_pool_flops};
  return d;
}

const OpDescriptor& describe_GlobalAveragePool() {
  static const OpDescriptor d{
      .kind = OpKind::kGlobalAveragePool, .min_opset = 1, .infer = infer_global_pool, .flops = global_pool_flops};
  return d;
}

const OpDescriptor& describe_GlobalMaxPool() {
  static const OpDescriptor d{
      .kind = OpKind::kGlobalMaxPool, .min_opset = 1, .infer = infer_global_pool, .flops = global_pool_flops};
  return d;
}

}  // namespace ucudnn
