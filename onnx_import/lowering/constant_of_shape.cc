// ConstantOfShape's value and its lowering into an Expand (constant_of_shape.h).
#include "onnx_import/lowering/constant_of_shape.h"

#include <algorithm>
#include <vector>

#include "onnx_import/lowering/lowering_builder.h"
#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {

Status lower_one(ir::Graph& graph, const ir::Node& node, std::vector<ir::Node>& out) {
  LoweringBuilder build(graph, node, out, std::max(node.opset, 8));
  const ir::Value y = graph.value(node.outputs[0]);  // a copy: adding values moves them
  build.emit(OpKind::kExpand, "", {build.constant("value", constant_of_shape_value(node)), node.inputs[0]},
             y.dtype, y.shape, node.outputs[0]);
  return Status::ok();
}

}  // namespace

Tensor constant_of_shape_value(const ir::Node& node) {
  if (node.attrs.has("value")) return node.attrs.get_tensor("value").reshaped({});
  const float zero = 0.0f;
  return Tensor::from_floats({}, {&zero, 1});
}

Status lower_constants_of_shape(ir::Graph& graph) {
  return lower_each(graph, OpKind::kConstantOfShape, lower_one, "ConstantOfShape");
}

}  // namespace ucudnn
