// Descriptor of GroupNormalization: X [N, C, ...] (rank >= 2), Scale and B ([G] at opset 18, [C] from
// opset 21; G = num_groups divides C) → Y like X; attributes num_groups (required), epsilon (1e-5),
// stash_type (opset 21; 1, float32 statistics, the only one accepted). It never reaches a backend:
// lower_group_norms rewrites it (Note [lowered ops], lowering.h).
#include "runtime/ops/group_norm.h"

#include <algorithm>
#include <string>
#include <vector>

#include "runtime/core/bytes.h"
#include "runtime/ops/lowering.h"
#include "runtime/ops/normalization_lowering.h"
#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {

// Opset 21 made Scale and B per channel; opset 18 had them per group.
bool per_channel(int opset) { return opset >= 21; }

Status infer_group_norm(InferContext& ctx) {
  for (size_t i = 0; i < ctx.num_inputs(); ++i) UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(i, {DType::kFloat32}));
  if (ctx.attrs().get_int("stash_type") != 1)
    return ctx.unsupported_error("stash_type " + std::to_string(ctx.attrs().get_int("stash_type")) +
                                 " (only 1, float32 statistics, is supported)");
  const Shape& x = ctx.input(0).shape;
  if (x.size() < 2) return ctx.error("X must have rank >= 2 ([N, C, ...]), got " + shape_to_string(x));
  const int64_t groups = ctx.attrs().get_int("num_groups");
  if (groups <= 0 || x[1] % groups != 0)
    return ctx.error("num_groups " + std::to_string(groups) + " does not divide the " + std::to_string(x[1]) +
                     " channels");
  const int64_t n = per_channel(ctx.opset()) ? x[1] : groups;
  static const char* const kNames[] = {"X", "scale", "bias"};
  for (size_t i = 1; i < 3; ++i)
    if (ctx.input(i).shape != Shape{n})
      return ctx.error(std::string(kNames[i]) + " shape " + shape_to_string(ctx.input(i).shape) + " is not [" +
                       std::to_string(n) + "] (" + (per_channel(ctx.opset()) ? "C" : "num_groups") + " at opset " +
                       std::to_string(ctx.opset()) + ")");
  ctx.set_output(0, DType::kFloat32, x);
  return Status::ok();
}

// Two reductions and about eight elementwise operations per element.
int64_t group_norm_flops(const InferContext& ctx) {
  return saturating_mul(int64_t{10}, shape_numel(ctx.input(0).shape));
}

// Appends the nodes of lower_group_norms for `node`.
Status lower_one(ir::Graph& graph, const ir::Node& node, std::vector<ir::Node>& out) {
  const Shape x = graph.value(node.inputs[0]).shape;
  const int64_t groups = node.attrs.get_int("num_groups");
  const Shape grouped = {x[0], groups, shape_numel(x) / std::max<int64_t>(x[0] * groups, 1)};
  NormalizationLowering lowering(graph, node, out);
  auto shape_constant = [&](const char* what, const Shape& shape) { return lowering.int64s(what, shape); };
  const ir::ValueId x_grouped =
      lowering.emit(OpKind::kReshape, "grouped", {node.inputs[0], shape_constant("grouped_shape", grouped)}, grouped);
  const float epsilon = node.attrs.get_float("epsilon");
  if (!per_channel(node.opset)) {  // Scale and B [G] as [G, 1], on the grouped view
    const Shape per_group = {groups, 1};
    const ir::ValueId affine_shape = shape_constant("group_shape", per_group);
    const ir::ValueId scale = lowering.emit(OpKind::kReshape, "scale", {node.inputs[1], affine_shape}, per_group);
    const ir::ValueId bias = lowering.emit(OpKind::kReshape, "bias", {node.inputs[2], affine_shape}, per_group);
    const ir::ValueId y_grouped = lowering.intermediate("y_grouped", grouped);
    UCUDNN_RETURN_IF_ERROR(lowering.run(x_grouped, {2}, epsilon, scale, bias, y_grouped));
    lowering.emit(OpKind::kReshape, "ungrouped", {y_grouped, shape_constant("x_shape", x)}, x, node.outputs[0]);
    return Status::ok();
  }
  // Scale and B [C] as [C, 1, ..., 1], on Y reshaped back to X's shape
  Shape per_channel_shape(x.size() - 1, 1);
  per_channel_shape[0] = x[1];
  const ir::ValueId affine_shape = shape_constant("channel_shape", per_channel_shape);
  const ir::ValueId scale = lowering.emit(OpKind::kReshape, "scale", {node.inputs[1], affine_shape}, per_channel_shape);
  const ir::ValueId bias = lowering.emit(OpKind::kReshape, "bias", {node.inputs[2], affine_shape}, per_channel_shape);
  const ir::ValueId normalized = lowering.intermediate("normalized_grouped", grouped);
  UCUDNN_RETURN_IF_ERROR(lowering.run(x_grouped, {2}, epsilon, ir::kNoValue, ir::kNoValue, normalized));
  const ir::ValueId ungrouped =
      lowering.emit(OpKind::kReshape, "ungrouped", {normalized, shape_constant("x_shape", x)}, x);
  const ir::ValueId scaled = lowering.emit(OpKind::kMul, "scaled", {ungrouped, scale}, x);
  lowering.emit(OpKind::kAdd, "biased", {scaled, bias}, x, node.outputs[0]);
  return Status::ok();
}

}  // namespace

const OpDescriptor& describe_GroupNormalization() {
  static const OpDescriptor d{.kind = OpKind::kGroupNormalization,
                              .min_inputs = 3,
                              .max_inputs = 3,
                              .max_outputs = 1,
                              .min_opset = 18,
                              .attrs = {attr_required("num_groups", ir::AttrType::kInt),
                                        attr_float("epsilon", 1e-5f), attr_int("stash_type", 1)},
                              .infer = infer_group_norm,
                              .flops = group_norm_flops};
  return d;
}

Status lower_group_norms(ir::Graph& graph) {
  return lower_each(graph, OpKind::kGroupNormalization, lower_one, "GroupNormalization");
}

}  // namespace ucudnn
