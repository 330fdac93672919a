// Graph-editing helpers (see graph_edit.h).
#include "optimizer/passes/graph_edit.h"

#include <algorithm>
#include <utility>

#include "runtime/ir/pointwise_program.h"

namespace ucudnn::optimizer {

std::vector<int> count_uses(const ir::Graph& graph) {
  std::vector<int> uses(graph.values.size(), 0);
  for (const ir::Node& node : graph.nodes)
    for (ir::ValueId id : node.inputs)
      if (id != ir::kNoValue) ++uses[id];
  for (ir::ValueId id : graph.outputs) ++uses[id];
  return uses;
}

bool is_graph_output(const ir::Graph& graph, ir::ValueId id) {
  return std::find(graph.outputs.begin(), graph.outputs.end(), id) != graph.outputs.end();
}

void replace_uses(ir::Graph& graph, ir::ValueId from, ir::ValueId to) {
  for (ir::Node& node : graph.nodes)
    for (ir::ValueId& id : node.inputs)
      if (id == from) id = to;
}

void remove_nodes(ir::Graph& graph, const std::vector<bool>& remove) {
  std::vector<ir::Node> kept;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    if (remove[n]) continue;
    for (ir::ValueId id : graph.nodes[n].outputs)
      if (id != ir::kNoValue) graph.value(id).producer = static_cast<ir::NodeId>(kept.size());
    kept.push_back(std::move(graph.nodes[n]));
  }
  graph.nodes = std::move(kept);
  graph.prune();
}

ir::Node make_fused_pointwise(const ir::Node& replaced, std::vector<ir::ValueId> inputs, PointwiseAttrs attrs) {
  ir::Node fused;
  fused.name = replaced.name;
  fused.op = OpKind::kFusedPointwise;
  fused.opset = replaced.opset;
  fused.inputs = std::move(inputs);
  fused.outputs = replaced.outputs;
  fused.attrs.set(ir::kPointwiseProgramAttr, std::move(attrs.program));
  fused.attrs.set(ir::kPointwiseConstantsAttr, std::move(attrs.constants));
  fused.attrs.set(ir::kPointwiseConcatAxisAttr, attrs.concat_axis);
  fused.attrs.set(ir::kPointwiseConcatCountAttr, attrs.concat_count);
  fused.attrs.set(ir::kPointwisePatternAttr, std::move(attrs.pattern));
  return fused;
}

}  // namespace ucudnn::optimizer
