// fuse_conv_activation: Conv → Relu, where the Conv's output feeds only the
// Relu, becomes one Conv with attribute "activation" = "Relu". The CPU kernel
// applies it to its output; cuDNN runs it inside cudnnConvolutionBiasActivationForward.
// fuse_add_activation: the same for Add → Relu (ResNet's residual joins); the
// elementwise kernels compute max(a + b, 0) in one pass.
#include "optimizer/passes/graph_edit.h"
#include "optimizer/passes/passes.h"

namespace ucudnn::optimizer {

Status fuse_conv_activation(ir::Graph& graph, PassStats* stats) {
  std::vector<int> uses = count_uses(graph);
  std::vector<bool> remove(graph.nodes.size(), false);
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const ir::Node& relu = graph.nodes[n];
    if (relu.op != OpKind::kRelu) continue;
    const ir::NodeId conv_id = graph.value(relu.inputs[0]).producer;
    if (conv_id < 0 || remove[conv_id]) continue;
    ir::Node& conv = graph.nodes[conv_id];
    if (conv.op != OpKind::kConv || conv.attrs.has(ir::kFusedActivationAttr)) continue;
    if (uses[conv.outputs[0]] != 1 || is_graph_output(graph, conv.outputs[0])) continue;
    conv.attrs.set(ir::kFusedActivationAttr, std::string("Relu"));
    conv.outputs[0] = relu.outputs[0];
    graph.value(conv.outputs[0]).producer = conv_id;
    remove[n] = true;
    ++stats->activations_fused;
  }
  remove_nodes(graph, remove);
  return Status::ok();
}

Status fuse_add_activation(ir::Graph& graph, PassStats* stats) {
  std::vector<int> uses = count_uses(graph);
  std::vector<bool> remove(graph.nodes.size(), false);
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const ir::Node& relu = graph.nodes[n];
    if (relu.op != OpKind::kRelu) continue;
    const ir::NodeId add_id = graph.value(relu.inputs[0]).producer;
    if (add_id < 0 || remove[add_id]) continue;
    ir::Node& add = graph.nodes[add_id];
    if (add.op != OpKind::kAdd || add.attrs.has(ir::kFusedActivationAttr)) continue;
    if (graph.value(add.outputs[0]).dtype != DType::kFloat32) continue;
    if (uses[add.outputs[0]] != 1 || is_graph_output(graph, add.outputs[0])) continue;
    add.attrs.set(ir::kFusedActivationAttr, std::string("Relu"));
    add.outputs[0] = relu.outputs[0];
    graph.value(add.outputs[0]).producer = add_id;
    remove[n] = true;
    ++stats->activations_fused;
  }
  remove_nodes(graph, remove);
  return Status::ok();
}

}  // namespace ucudnn::optimizer
