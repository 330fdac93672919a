// append_gradients (autodiff.h): the reverse walk, the GradientContext the rules see, and the
// summing of gradient contributions.
#include "training/autodiff.h"

#include <map>
#include <string>

#include "runtime/ops/gradient.h"
#include "runtime/ops/op_descriptor.h"
#include "training/training_graph.h"

namespace ucudnn::training {

namespace {

// Which values need a gradient: float32 values that depend on a `wrt` value and that the loss
// depends on (a seeded value, or an input of a node with such an output).
std::vector<bool> values_needing_gradients(const ir::Graph& graph, size_t forward_nodes,
                                           const std::vector<GradientSeed>& seeds,
                                           const std::vector<ir::ValueId>& wrt) {
  std::vector<bool> depends(graph.values.size(), false), reaches(graph.values.size(), false);
  for (ir::ValueId id : wrt) depends[id] = true;
  for (size_t n = 0; n < forward_nodes; ++n) {
    const ir::Node& node = graph.nodes[n];
    bool any = false;
    for (ir::ValueId in : node.inputs) any = any || (in != ir::kNoValue && depends[in]);
    if (any)
      for (ir::ValueId out : node.outputs) depends[out] = true;
  }
  for (const GradientSeed& seed : seeds) reaches[seed.value] = true;
  for (size_t n = forward_nodes; n-- > 0;) {
    const ir::Node& node = graph.nodes[n];
    bool any = false;
    for (ir::ValueId out : node.outputs) any = any || reaches[out];
    if (any)
      for (ir::ValueId in : node.inputs)
        if (in != ir::kNoValue) reaches[in] = true;
  }
  std::vector<bool> needs(graph.values.size(), false);
  for (size_t v = 0; v < graph.values.size(); ++v)
    needs[v] = depends[v] && reaches[v] && graph.values[v].dtype == DType::kFloat32;
  return needs;
}

class Differentiator;

// What one forward node's rule sees.
class NodeContext final : public GradientContext {
 public:
  NodeContext(Differentiator& d, ir::Node node) : d_(d), node_(std::move(node)) {}

  const ir::Node& node() const override { return node_; }
  const ir::Graph& graph() const override;
  ir::ValueId output_grad(size_t i) const override;
  bool needs_input_grad(size_t i) const override;
  Status add_input_grad(size_t i, ir::ValueId grad) override;
  Expected<std::vector<ir::ValueId>> emit(OpKind op, std::vector<ir::ValueId> inputs, ir::Attributes attrs,
                                          size_t num_outputs) override;
  ir::ValueId add_constant(Tensor tensor, const std::string& name_hint) override;

 private:
  Differentiator& d_;
  ir::Node node_;
};

class Differentiator {
 public:
  Differentiator(ir::Graph& graph, std::vector<bool> needs) : graph_(graph), needs_(std::move(needs)) {}

  ir::Graph& graph() { return graph_; }
  bool needs(ir::ValueId id) const {
    return id != ir::kNoValue && static_cast<size_t>(id) < needs_.size() && needs_[id];
  }
  void contribute(ir::ValueId id, ir::ValueId grad) { contributions_[id].push_back(grad); }
  bool has_contributions(ir::ValueId id) const { return contributions_.count(id) != 0; }

  // The sum of every contribution to `id` (one Add per extra term, made once); kNoValue if none.
  Expected<ir::ValueId> total(ir::ValueId id, const std::string& name) {
    auto it = contributions_.find(id);
    if (it == contributions_.end()) return ir::kNoValue;
    std::vector<ir::ValueId>& terms = it->second;
    while (terms.size() > 1) {
      ir::Node add;
      add.name = name + "/grad_sum" + std::to_string(counter_++);
      add.op = OpKind::kAdd;
      UCUDNN_ASSIGN_OR_RETURN(std::vector<ir::ValueId> out,
                              append_node(std::move(add), {terms[terms.size() - 2], terms.back()}, {}, 1));
      terms.pop_back();
      terms.back() = out.front();
    }
    return terms.front();
  }

  // Appends `node` (op and name set) over `inputs`: spec defaults filled in, outputs made and
  // shaped by the op's rule. Nothing is left behind when the rule refuses it.
  Expected<std::vector<ir::ValueId>> append_node(ir::Node node, std::vector<ir::ValueId> inputs,
                                                 ir::Attributes attrs, size_t num_outputs) {
    node.attrs = std::move(attrs);
    fill_default_attributes(node);
    node.opset = kTrainingOpset;
    node.inputs = std::move(inputs);
    const size_t values_before = graph_.values.size();
    for (size_t i = 0; i < num_outputs; ++i) {
      ir::Value v;
      v.name = node.name + ":" + std::to_string(i);
      v.producer = static_cast<ir::NodeId>(graph_.nodes.size());
      node.outputs.push_back(graph_.add_value(std::move(v)));
    }
    graph_.nodes.push_back(std::move(node));
    if (Status inferred = infer_node_outputs(graph_, static_cast<ir::NodeId>(graph_.nodes.size() - 1));
        !inferred.is_ok()) {
      graph_.nodes.pop_back();
      graph_.values.resize(values_before);
      return inferred;
    }
    return graph_.nodes.back().outputs;
  }

  ir::ValueId add_constant(Tensor tensor, const std::string& name) {
    ir::Value v;
    v.name = name + "#" + std::to_string(counter_++);
    v.dtype = tensor.dtype();
    v.shape = tensor.shape();
    v.constant = std::move(tensor);
    return graph_.add_value(std::move(v));
  }

  int next_id() { return counter_++; }

 private:
  ir::Graph& graph_;
  std::vector<bool> needs_;
  std::map<ir::ValueId, std::vector<ir::ValueId>> contributions_;
  int counter_ = 0;
};

const ir::Graph& NodeContext::graph() const { return d_.graph(); }

ir::ValueId NodeContext::output_grad(size_t i) const {
  // Summed before the rule runs (run_rule), so this is a lookup.
  if (i >= node_.outputs.size() || !d_.has_contributions(node_.outputs[i])) return ir::kNoValue;
  Expected<ir::ValueId> total = d_.total(node_.outputs[i], node_.name);
  return total ? *total : ir::kNoValue;
}

bool NodeContext::needs_input_grad(size_t i) const { return i < node_.inputs.size() && d_.needs(node_.inputs[i]); }

Status NodeContext::add_input_grad(size_t i, ir::ValueId grad) {
  if (!needs_input_grad(i))
    return internal_error("the gradient rule of " + node_.describe() + " gave input " + std::to_string(i) +
                          " a gradient it does not need");
  const ir::Value& in = d_.graph().value(node_.inputs[i]);
  const ir::Value& g = d_.graph().value(grad);
  if (g.dtype != in.dtype || g.shape != in.shape)
    return internal_error("the gradient rule of " + node_.describe() + " gave input " + std::to_string(i) + " ('" +
                          in.name + "', " + dtype_name(in.dtype) + shape_to_string(in.shape) + ") a gradient of " +
                          dtype_name(g.dtype) + shape_to_string(g.shape));
  d_.contribute(node_.inputs[i], grad);
  return Status::ok();
}

Expected<std::vector<ir::ValueId>> NodeContext::emit(OpKind op, std::vector<ir::ValueId> inputs, ir::Attributes attrs,
                                                     size_t num_outputs) {
  ir::Node node;
  node.op = op;
  node.name = node_.name + "/grad/" + op_name(op) + std::to_string(d_.next_id());
  Expected<std::vector<ir::ValueId>> out = d_.append_node(std::move(node), std::move(inputs), std::move(attrs),
                                                          num_outputs);
  if (!out)
    return Status(out.status().code(), "the gradient of " + node_.describe() + ": " + out.status().message());
  return out;
}

ir::ValueId NodeContext::add_constant(Tensor tensor, const std::string& name_hint) {
  return d_.add_constant(std::move(tensor), node_.name + "/grad/" + name_hint);
}

}  // namespace

Expected<std::vector<ir::ValueId>> append_gradients(ir::Graph& graph, const std::vector<GradientSeed>& seeds,
                                                    const std::vector<ir::ValueId>& wrt) {
  const size_t forward_nodes = graph.nodes.size();
  for (const GradientSeed& seed : seeds) {
    const ir::Value& v = graph.value(seed.value);
    const ir::Value& g = graph.value(seed.grad);
    if (v.dtype != g.dtype || v.shape != g.shape)
      return invalid_argument("the gradient seed of '" + v.name + "' (" + dtype_name(v.dtype) +
                              shape_to_string(v.shape) + ") is " + dtype_name(g.dtype) + shape_to_string(g.shape));
  }
  Differentiator d(graph, values_needing_gradients(graph, forward_nodes, seeds, wrt));
  for (const GradientSeed& seed : seeds) d.contribute(seed.value, seed.grad);

  for (size_t n = forward_nodes; n-- > 0;) {
    const ir::Node node = graph.nodes[n];  // a copy: appending nodes moves the vector
    bool flows_in = false, flows_out = false;
    for (ir::ValueId out : node.outputs) flows_in = flows_in || d.has_contributions(out);
    for (ir::ValueId in : node.inputs) flows_out = flows_out || d.needs(in);
    if (!flows_in || !flows_out) continue;
    for (ir::ValueId out : node.outputs)  // sum each output's contributions once, before the rule reads them
      if (d.has_contributions(out)) UCUDNN_RETURN_IF_ERROR(d.total(out, node.name).status());
    const OpDescriptor& desc = op_descriptor(node.op);
    if (desc.gradient == nullptr)
      return unsupported("cannot train through " + node.describe() + ": ucudnn has no gradient for " +
                         op_name(node.op) + " yet");
    NodeContext ctx(d, node);
    UCUDNN_RETURN_IF_ERROR(desc.gradient(ctx));
  }

  std::vector<ir::ValueId> grads;
  for (ir::ValueId id : wrt) {
    UCUDNN_ASSIGN_OR_RETURN(ir::ValueId total, d.total(id, graph.value(id).name));
    if (total == ir::kNoValue) {
      const ir::Value& v = graph.value(id);
      UCUDNN_ASSIGN_OR_RETURN(Tensor zeros, Tensor::allocate(v.dtype, v.shape));
      total = d.add_constant(std::move(zeros), v.name + "/grad/zero");
    }
    grads.push_back(total);
  }
  return grads;
}

}  // namespace ucudnn::training
