// The lowering of MaxUnpool (max_unpool.h).
#include "onnx_import/lowering/max_unpool.h"

#include <vector>

#include "onnx_import/lowering/lowering_builder.h"
#include "runtime/ops/max_unpool.h"
#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {

Status lower_one(ir::Graph& graph, const ir::Node& node, std::vector<ir::Node>& out) {
  const Shape x = graph.value(node.inputs[0]).shape;  // copies: adding values moves them
  const Shape y = graph.value(node.outputs[0]).shape;
  const Shape unpooled = max_unpool_shape(node.attrs, x).value();
  const DType f32 = DType::kFloat32;
  const int64_t elements = shape_numel(x), total = shape_numel(unpooled);
  LoweringBuilder build(graph, node, out, std::max(node.opset, 13));
  const ir::ValueId zeros =
      build.emit(OpKind::kConstantOfShape, "zeros", {build.int64s("zeros_shape", {total})}, f32, {total});
  const ir::ValueId flat_i =
      build.emit(OpKind::kReshape, "flat_indices", {node.inputs[1], build.int64s("flat_shape", {elements})},
                 DType::kInt64, {elements});
  const ir::ValueId flat_x = build.emit(OpKind::kReshape, "flat_values",
                                        {node.inputs[0], build.int64s("values_shape", {elements})}, f32, {elements});
  const ir::ValueId scattered = build.emit(OpKind::kScatterElements, "scatter", {zeros, flat_i, flat_x}, f32, {total});
  const bool padded = y != unpooled;
  const ir::ValueId unflat =
      build.emit(OpKind::kReshape, "unflatten", {scattered, build.int64s("unpooled_shape", unpooled)}, f32, unpooled,
                 padded ? ir::kNoValue : node.outputs[0]);
  if (padded) {
    std::vector<int64_t> pads(2 * y.size(), 0);
    for (size_t d = 0; d < y.size(); ++d) pads[y.size() + d] = y[d] - unpooled[d];
    build.emit(OpKind::kPad, "pad", {unflat, build.int64s("pads", pads)}, f32, y, node.outputs[0]);
  }
  return Status::ok();
}

}  // namespace

Status lower_max_unpools(ir::Graph& graph) { return lower_each(graph, OpKind::kMaxUnpool, lower_one, "MaxUnpool"); }

}  // namespace ucudnn
