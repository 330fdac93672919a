// remove_identities: Identity and inference-mode Dropout copy their input; their
// readers read the input directly. Kept when the output is a graph output (its
// name is part of the model's interface) or when Dropout's mask is used.
#include "optimizer/passes/graph_edit.h"
#include "optimizer/passes/passes.h"

namespace ucudnn::optimizer {

Status remove_identities(ir::Graph& graph, PassStats* stats) {
  std::vector<int> uses = count_uses(graph);
  std::vector<bool> remove(graph.nodes.size(), false);
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const ir::Node& node = graph.nodes[n];
    if (node.op != OpKind::kIdentity && node.op != OpKind::kDropout) continue;
    const ir::ValueId out = node.outputs[0];
    if (is_graph_output(graph, out)) continue;
    if (node.outputs.size() > 1 && node.outputs[1] != ir::kNoValue && uses[node.outputs[1]] > 0) continue;
    replace_uses(graph, out, node.inputs[0]);
    remove[n] = true;
    ++stats->identities_removed;
  }
  remove_nodes(graph, remove);
  return Status::ok();
}

}  // namespace ucudnn::optimizer
