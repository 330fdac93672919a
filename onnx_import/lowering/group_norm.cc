// The lowering of GroupNormalization (group_norm.h).
#include "onnx_import/lowering/group_norm.h"

#include <algorithm>
#include <vector>

#include "onnx_import/lowering/lowering_builder.h"
#include "onnx_import/lowering/normalization_lowering.h"
#include "runtime/ops/group_norm.h"

namespace ucudnn {

namespace {

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
  if (!group_norm_per_channel(node.opset)) {  // Scale and B [G] as [G, 1], on the grouped view
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

Status lower_group_norms(ir::Graph& graph) {
  return lower_each(graph, OpKind::kGroupNormalization, lower_one, "GroupNormalization");
}

}  // namespace ucudnn
