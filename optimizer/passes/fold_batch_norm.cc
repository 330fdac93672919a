// fold_batch_norm: y = γ·(conv(x, W) + b − μ)/√(σ² + ε) + β is conv(x, W') + b'
// with W'[k] = W[k]·s[k], b'[k] = (b[k] − μ[k])·s[k] + β[k], s = γ/√(σ² + ε).
// Applies when the Conv's output feeds only the BatchNormalization, every
// parameter is a constant, and all are float32. New weights are new constants
// (an initializer shared with another node is never modified).
#include <cmath>

#include "optimizer/passes/graph_edit.h"
#include "optimizer/passes/passes.h"

namespace ucudnn::optimizer {

namespace {

const Tensor* constant_of(const ir::Graph& graph, ir::ValueId id) {
  if (id == ir::kNoValue) return nullptr;
  const ir::Value& v = graph.value(id);
  return v.constant && v.dtype == DType::kFloat32 ? &*v.constant : nullptr;
}

}  // namespace

Status fold_batch_norm(ir::Graph& graph, PassStats* stats) {
  std::vector<int> uses = count_uses(graph);
  std::vector<bool> remove(graph.nodes.size(), false);
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const ir::Node& bn = graph.nodes[n];
    if (bn.op != OpKind::kBatchNormalization || bn.outputs.size() != 1) continue;
    const ir::NodeId conv_id = graph.value(bn.inputs[0]).producer;
    if (conv_id < 0 || remove[conv_id]) continue;
    ir::Node& conv = graph.nodes[conv_id];
    const ir::ValueId conv_out = conv.outputs[0];
    if (conv.op != OpKind::kConv || uses[conv_out] != 1 || is_graph_output(graph, conv_out)) continue;
    if (conv.attrs.has(ir::kFusedActivationAttr)) continue;
    const Tensor* w = constant_of(graph, conv.inputs[1]);
    const Tensor* b = conv.inputs.size() > 2 ? constant_of(graph, conv.inputs[2]) : nullptr;
    const bool has_bias = conv.inputs.size() > 2 && conv.inputs[2] != ir::kNoValue;
    const Tensor* gamma = constant_of(graph, bn.inputs[1]);
    const Tensor* beta = constant_of(graph, bn.inputs[2]);
    const Tensor* mean = constant_of(graph, bn.inputs[3]);
    const Tensor* var = constant_of(graph, bn.inputs[4]);
    if (!w || (has_bias && !b) || !gamma || !beta || !mean || !var) continue;
    const int64_t k = w->dim(0);
    if (gamma->numel() != k || beta->numel() != k || mean->numel() != k || var->numel() != k) continue;

    const float epsilon = bn.attrs.get_float("epsilon");
    UCUDNN_ASSIGN_OR_RETURN(Tensor new_w, w->clone());
    UCUDNN_ASSIGN_OR_RETURN(Tensor new_b, Tensor::allocate(DType::kFloat32, {k}));
    const int64_t per_filter = w->numel() / k;
    for (int64_t c = 0; c < k; ++c) {
      const float scale = gamma->data<float>()[c] / std::sqrt(var->data<float>()[c] + epsilon);
      float* filter = new_w.data<float>() + c * per_filter;
      for (int64_t i = 0; i < per_filter; ++i) filter[i] *= scale;
      const float bias = b ? b->data<float>()[c] : 0.0f;
      new_b.data<float>()[c] = (bias - mean->data<float>()[c]) * scale + beta->data<float>()[c];
    }
    const ir::ValueId w_id =
        graph.add_value({conv.name + ".folded_weight", DType::kFloat32, new_w.shape(), std::move(new_w), -1});
    const ir::ValueId b_id =
        graph.add_value({conv.name + ".folded_bias", DType::kFloat32, {k}, std::move(new_b), -1});
    ir::Node& conv_again = graph.nodes[conv_id];  // add_value may not move nodes, but be explicit
    conv_again.inputs.resize(3);
    conv_again.inputs[1] = w_id;
    conv_again.inputs[2] = b_id;
    // The Conv now produces the BatchNormalization's output.
    conv_again.outputs[0] = graph.nodes[n].outputs[0];
    graph.value(conv_again.outputs[0]).producer = conv_id;
    remove[n] = true;
    ++stats->batch_norms_folded;
  }
  remove_nodes(graph, remove);
  return Status::ok();
}

}  // namespace ucudnn::optimizer
