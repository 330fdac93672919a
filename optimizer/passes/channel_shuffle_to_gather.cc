// channel_shuffle_to_gather: ShuffleNet's channel shuffle,
//   Reshape X [N, C, ...] → [N, g, C/g, ...], Transpose (0, 2, 1, 3, ...), Reshape back to X's shape,
// becomes one Gather of X's channels along axis 1: output channel j is input channel
// (j mod g)·(C/g) + j div g. Same bytes out, one copy instead of three ops; and a Gather runs
// channels-last (convert_to_channels_last) where the 5-D Reshape cannot, so a ShuffleNet's
// body stays NHWC instead of transposing at every block.
#include <numeric>

#include "optimizer/passes/graph_edit.h"
#include "optimizer/passes/passes.h"

namespace ucudnn::optimizer {

namespace {

// The node producing `id` when it is `op` and `id` is read once, by one node, and is no graph output.
const ir::Node* single_use_producer(const ir::Graph& graph, const std::vector<int>& uses, ir::ValueId id,
                                    OpKind op) {
  const ir::NodeId producer = graph.value(id).producer;
  if (producer < 0 || uses[id] != 1 || is_graph_output(graph, id)) return nullptr;
  const ir::Node& node = graph.nodes[static_cast<size_t>(producer)];
  return node.op == op ? &node : nullptr;
}

// The group count g when `reshape_back` ends a channel shuffle of X (the first Reshape's input; set in
// `x`), else 0.
int64_t shuffle_groups(const ir::Graph& graph, const std::vector<int>& uses, const ir::Node& reshape_back,
                       ir::ValueId* x) {
  if (reshape_back.op != OpKind::kReshape || reshape_back.inputs.empty()) return 0;
  const ir::Node* transpose = single_use_producer(graph, uses, reshape_back.inputs[0], OpKind::kTranspose);
  if (transpose == nullptr) return 0;
  const ir::Node* split = single_use_producer(graph, uses, transpose->inputs[0], OpKind::kReshape);
  if (split == nullptr) return 0;
  const Shape& in = graph.value(split->inputs[0]).shape;
  const Shape& grouped = graph.value(split->outputs[0]).shape;
  if (in.size() < 2 || grouped.size() != in.size() + 1 || graph.value(reshape_back.outputs[0]).shape != in) return 0;
  // grouped is in with C split into [g, C/g].
  if (grouped[0] != in[0] || grouped[1] * grouped[2] != in[1] || grouped[1] < 1 ||
      !std::equal(in.begin() + 2, in.end(), grouped.begin() + 3))
    return 0;
  std::vector<int64_t> swap(grouped.size());
  std::iota(swap.begin(), swap.end(), int64_t{0});
  std::swap(swap[1], swap[2]);
  if (!transpose->attrs.has("perm") || transpose->attrs.get_ints("perm") != swap) return 0;
  *x = split->inputs[0];
  return grouped[1];
}

}  // namespace

Status channel_shuffle_to_gather(ir::Graph& graph, PassStats* stats) {
  const std::vector<int> uses = count_uses(graph);
  bool rewritten = false;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    ir::ValueId x = ir::kNoValue;
    const int64_t groups = shuffle_groups(graph, uses, graph.nodes[n], &x);
    if (groups == 0) continue;
    const int64_t channels = graph.value(x).shape[1], per_group = channels / groups;
    std::vector<int64_t> indices(static_cast<size_t>(channels));
    for (int64_t j = 0; j < channels; ++j) indices[static_cast<size_t>(j)] = (j % groups) * per_group + j / groups;
    const Shape shape = {channels};
    ir::Node& node = graph.nodes[n];
    const ir::ValueId id = graph.add_value(
        {node.name + ".shuffle_indices", DType::kInt64, shape, Tensor::from_int64s(shape, indices), -1});
    node.op = OpKind::kGather;
    node.inputs = {x, id};
    node.attrs = {};
    node.attrs.set("axis", int64_t{1});
    ++stats->channel_shuffles_made_gathers;
    rewritten = true;
  }
  if (rewritten) graph.prune();  // the Reshape and Transpose before each Gather are read no more
  return Status::ok();
}

}  // namespace ucudnn::optimizer
