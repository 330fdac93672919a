// fuse_conv_add: a residual join Add(Conv(x), z) → Relu (the Add already
// carrying the fused Relu, see fuse_add_activation) becomes one Conv with a
// fourth input z: y = relu(conv(x, w) + b + z) (Note [fused nodes]).
// cuDNN computes exactly this in cudnnConvolutionBiasActivationForward (z with
// alpha2 = 1), so the Add kernel and one pass over the activations disappear.
//
// Conditions: the Conv has a bias and no activation of its own, its output
// feeds only this Add and is not a graph output, both Add operands have the
// same shape (no broadcasting) and dtype float32. The fused Conv takes the Add's
// place in the node order (z may be computed after the Conv, e.g. ResNet's
// downsample branch), which is safe because nothing else reads the Conv's output.
//
// fuse_conv_any_add (the CPU's) also joins an Add without an activation to its Conv: y = conv(x, w)
// + b + z. oneDNN adds z inside the convolution (a sum post-op), so MobileNetV3's and EfficientNet's
// residual Adds are no pass of their own. The GPU keeps them apart: cuDNN's fused call needs a Relu,
// and fuse_conv_bias gives such an Add the Conv's bias instead.
#include "optimizer/passes/graph_edit.h"
#include "optimizer/passes/passes.h"

namespace ucudnn::optimizer {

namespace {

// Whether operand `conv_out` of `add` comes from a Conv this pass may absorb.
bool fusable_conv(const ir::Graph& graph, const std::vector<int>& uses, const std::vector<bool>& remove,
                  ir::ValueId conv_out, ir::ValueId z) {
  const ir::NodeId id = graph.value(conv_out).producer;
  if (id < 0 || remove[id] || conv_out == z) return false;
  const ir::Node& conv = graph.nodes[id];
  return conv.op == OpKind::kConv && conv.inputs.size() == 3 && conv.inputs[2] != ir::kNoValue &&
         !conv.attrs.has(ir::kFusedActivationAttr) && uses[conv_out] == 1 && !is_graph_output(graph, conv_out) &&
         graph.value(conv_out).shape == graph.value(z).shape && graph.value(conv_out).dtype == DType::kFloat32 &&
         graph.value(z).dtype == DType::kFloat32;
}

// Makes each Add(Conv(x), z) that carries a Relu (with `lone_adds`, also one that carries no activation)
// one Conv with the residual input z.
Status fuse_adds(ir::Graph& graph, PassStats* stats, bool lone_adds) {
  const std::vector<int> uses = count_uses(graph);
  std::vector<bool> remove(graph.nodes.size(), false);
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const ir::Node& add = graph.nodes[n];
    if (add.op != OpKind::kAdd || add.inputs.size() != 2) continue;
    const bool relu =
        add.attrs.has(ir::kFusedActivationAttr) && add.attrs.get_string(ir::kFusedActivationAttr) == "Relu";
    if (!relu && (!lone_adds || add.attrs.has(ir::kFusedActivationAttr))) continue;
    int which = -1;  // the Add operand that is the Conv's output
    for (int i = 0; i < 2 && which < 0; ++i)
      if (fusable_conv(graph, uses, remove, add.inputs[i], add.inputs[1 - i])) which = i;
    if (which < 0) continue;
    const ir::NodeId conv_id = graph.value(add.inputs[which]).producer;
    ir::Node fused = graph.nodes[conv_id];
    fused.inputs.push_back(add.inputs[1 - which]);
    if (relu) fused.attrs.set(ir::kFusedActivationAttr, std::string("Relu"));
    fused.outputs = add.outputs;
    graph.nodes[n] = std::move(fused);  // the Add's place: z and x are both computed by now
    remove[conv_id] = true;
    ++stats->residuals_fused;
  }
  remove_nodes(graph, remove);  // renumbers producers, drops the Conv's old output value
  return Status::ok();
}

}  // namespace

Status fuse_conv_add(ir::Graph& graph, PassStats* stats) { return fuse_adds(graph, stats, /*lone_adds=*/false); }

Status fuse_conv_any_add(ir::Graph& graph, PassStats* stats) { return fuse_adds(graph, stats, /*lone_adds=*/true); }

}  // namespace ucudnn::optimizer
