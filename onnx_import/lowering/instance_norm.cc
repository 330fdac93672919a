// The lowering of InstanceNormalization (instance_norm.h).
#include "onnx_import/lowering/instance_norm.h"

#include <vector>

#include "onnx_import/lowering/lowering_builder.h"
#include "onnx_import/lowering/normalization_lowering.h"

namespace ucudnn {

namespace {

// Appends the nodes of lower_instance_norms for `node`.
Status lower_one(ir::Graph& graph, const ir::Node& node, std::vector<ir::Node>& out) {
  const Shape x = graph.value(node.inputs[0]).shape;
  std::vector<int64_t> axes;
  for (int64_t d = 2; d < static_cast<int64_t>(x.size()); ++d) axes.push_back(d);
  Shape per_channel(x.size() - 1, 1);  // [C, 1, ..., 1]: broadcasts along X's axis 1
  per_channel[0] = x[1];
  NormalizationLowering lowering(graph, node, out);
  const ir::ValueId target = lowering.int64s("channel_shape", per_channel);
  const ir::ValueId scale = lowering.emit(OpKind::kReshape, "scale", {node.inputs[1], target}, per_channel);
  const ir::ValueId bias = lowering.emit(OpKind::kReshape, "bias", {node.inputs[2], target}, per_channel);
  return lowering.run(node.inputs[0], axes, node.attrs.get_float("epsilon"), scale, bias, node.outputs[0]);
}

}  // namespace

Status lower_instance_norms(ir::Graph& graph) {
  return lower_each(graph, OpKind::kInstanceNormalization, lower_one, "InstanceNormalization");
}

}  // namespace ucudnn
