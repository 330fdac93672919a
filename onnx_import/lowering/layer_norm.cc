// The lowering of LayerNormalization (layer_norm.h).
#include "onnx_import/lowering/layer_norm.h"

#include <vector>

#include "onnx_import/lowering/lowering_builder.h"
#include "onnx_import/lowering/normalization_lowering.h"
#include "runtime/ops/layer_norm.h"

namespace ucudnn {

namespace {

// Appends the nodes of lower_layer_norms for `node`: the statistics over the axes from `axis` on.
Status lower_one(ir::Graph& graph, const ir::Node& node, std::vector<ir::Node>& out) {
  const int64_t rank = static_cast<int64_t>(graph.value(node.inputs[0]).shape.size());
  std::vector<int64_t> axes;
  for (int64_t d = layer_norm_axis(node.attrs, static_cast<size_t>(rank)); d < rank; ++d) axes.push_back(d);
  const ir::ValueId bias = node.inputs.size() > 2 ? node.inputs[2] : ir::kNoValue;
  return NormalizationLowering(graph, node, out)
      .run(node.inputs[0], axes, node.attrs.get_float("epsilon"), node.inputs[1], bias, node.outputs[0]);
}

}  // namespace

Status lower_layer_norms(ir::Graph& graph) {
  return lower_each(graph, OpKind::kLayerNormalization, lower_one, "LayerNormalization");
}

}  // namespace ucudnn
