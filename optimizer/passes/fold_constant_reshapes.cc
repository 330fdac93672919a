// fold_constant_reshapes: a Reshape, Flatten, Squeeze or Unsqueeze of a constant becomes that constant with
// its output's shape (the same elements; the buffer is shared). The importer folds such nodes itself, but
// not the ones a lowering makes after folding (Note [lowered ops]): an InstanceNormalization's Scale [C] as
// [C, 1, 1], which as the output of a node is no constant to fuse_pointwise and kept the Mul and the Add of
// every such normalization out of its pointwise program. Inference only: in a training graph that constant
// is a parameter, which must stay the one value the optimizer updates.
#include "optimizer/passes/graph_edit.h"
#include "optimizer/passes/passes.h"

namespace ucudnn::optimizer {

namespace {

bool relabels_its_input(OpKind op) {
  return op == OpKind::kReshape || op == OpKind::kFlatten || op == OpKind::kSqueeze || op == OpKind::kUnsqueeze;
}

}  // namespace

Status fold_constant_reshapes(ir::Graph& graph, PassStats* stats) {
  std::vector<bool> remove(graph.nodes.size(), false);
  bool any = false;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const ir::Node& node = graph.nodes[n];
    if (!relabels_its_input(node.op) || node.inputs.empty() || node.outputs.size() != 1) continue;
    const ir::Value& in = graph.value(node.inputs[0]);
    ir::Value& out = graph.value(node.outputs[0]);
    // A graph output stays computed: the executor writes outputs, it does not hand out constants.
    if (!in.constant || out.constant || is_graph_output(graph, node.outputs[0]) || in.dtype != out.dtype ||
        shape_numel(in.shape) != shape_numel(out.shape))
      continue;
    out.constant = in.constant->reshaped(out.shape);
    out.producer = -1;
    remove[n] = any = true;
    ++stats->constant_reshapes_folded;
  }
  if (any) remove_nodes(graph, remove);
  return Status::ok();
}

}  // namespace ucudnn::optimizer
