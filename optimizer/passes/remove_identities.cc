// remove_identities: Identity, inference-mode Dropout and a Pad whose pads are all 0 (PyTorch's
// exporter puts one before each AvgPool2d) copy their input; their readers read the input directly.
// Kept when the output is a graph output (its name is part of the model's interface) or when
// Dropout's mask is used.
#include <algorithm>

#include "optimizer/passes/graph_edit.h"
#include "optimizer/passes/passes.h"

namespace ucudnn::optimizer {

namespace {

// A Pad whose pads input is a constant of zeros.
bool pads_nothing(const ir::Graph& graph, const ir::Node& node) {
  if (node.op != OpKind::kPad || node.inputs.size() < 2 || node.inputs[1] == ir::kNoValue) return false;
  const auto& pads = graph.value(node.inputs[1]).constant;
  if (!pads) return false;
  auto values = pads->to_int64_vector();
  return values && std::all_of(values->begin(), values->end(), [](int64_t p) { return p == 0; });
}

}  // namespace

Status remove_identities(ir::Graph& graph, PassStats* stats) {
  std::vector<int> uses = count_uses(graph);
  std::vector<bool> remove(graph.nodes.size(), false);
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const ir::Node& node = graph.nodes[n];
    if (node.op != OpKind::kIdentity && node.op != OpKind::kDropout && !pads_nothing(graph, node)) continue;
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
