// Descriptor of LayerNormalization: X [d0, ..., dr-1], Scale and optional B broadcasting to X's
// normalized shape [d_axis, ..., dr-1] → Y like X, optional Mean and InvStdDev [d0, ..., d_axis-1, 1, ..., 1];
// attributes axis (-1), epsilon (1e-5), stash_type (1: float32; others Unsupported). It never reaches a
// backend: the importer lowers it (onnx_import/lowering/layer_norm.h; Note [lowered ops], lowered_ops.h), so
// the pointwise part fuses and training differentiates the pieces.
#include "runtime/ops/layer_norm.h"

#include <string>
#include <utility>
#include <vector>

#include "runtime/core/bytes.h"
#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {

// X's shape with the normalized dims made 1 (Mean's and InvStdDev's shape).
Shape statistics_shape(const Shape& x, int64_t axis) {
  Shape s = x;
  for (size_t d = static_cast<size_t>(axis); d < s.size(); ++d) s[d] = 1;
  return s;
}

Status infer_layer_norm(InferContext& ctx) {
  for (size_t i = 0; i < ctx.num_inputs(); ++i)
    if (ctx.has_input(i)) UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(i, {DType::kFloat32}));
  if (ctx.attrs().get_int("stash_type") != 1)
    return ctx.unsupported_error("stash_type " + std::to_string(ctx.attrs().get_int("stash_type")) +
                                 " (only 1, float32 statistics, is supported)");
  const Shape& x = ctx.input(0).shape;
  const int64_t axis = layer_norm_axis(ctx.attrs(), x.size());
  if (axis < 0)
    return ctx.error("axis " + std::to_string(ctx.attrs().get_int("axis")) + " is out of range for X of rank " +
                     std::to_string(x.size()));
  const Shape normalized(x.begin() + axis, x.end());
  static const char* const kNames[] = {"X", "Scale", "B"};
  for (size_t i = 1; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) continue;
    Shape out;
    if (!broadcast_shapes(normalized, ctx.input(i).shape, &out) || out != normalized)
      return ctx.error(std::string(kNames[i]) + " shape " + shape_to_string(ctx.input(i).shape) +
                       " does not broadcast to X's normalized shape " + shape_to_string(normalized));
  }
  ctx.set_output(0, DType::kFloat32, x);
  for (size_t o = 1; o < ctx.num_outputs(); ++o) ctx.set_output(o, DType::kFloat32, statistics_shape(x, axis));
  return Status::ok();
}

// Two reductions and about eight elementwise operations per element.
int64_t layer_norm_flops(const InferContext& ctx) {
  return saturating_mul(int64_t{10}, shape_numel(ctx.input(0).shape));
}

}  // namespace

int64_t layer_norm_axis(const ir::Attributes& attrs, size_t rank) {
  int64_t axis = attrs.get_int("axis");
  if (axis < 0) axis += static_cast<int64_t>(rank);
  return axis >= 0 && axis < static_cast<int64_t>(rank) ? axis : -1;
}

const OpDescriptor& describe_LayerNormalization() {
  static const OpDescriptor d{.kind = OpKind::kLayerNormalization,
                              .min_inputs = 2,
                              .max_inputs = 3,
                              .max_outputs = 3,
                              .min_opset = 17,
                              .attrs = {attr_int("axis", -1), attr_float("epsilon", 1e-5f), attr_int("stash_type", 1)},
                              .infer = infer_layer_norm,
                              .flops = layer_norm_flops};
  return d;
}

}  // namespace ucudnn
