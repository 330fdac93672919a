// Graph-editing helpers (see graph_edit.h).
#include "optimizer/passes/graph_edit.h"

#include <algorithm>

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

}  // namespace ucudnn::optimizer
