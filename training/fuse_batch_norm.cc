// fuse_batch_norm_activations (fuse_batch_norm.h): find the matches on the graph as it is, check each
// fused node with its shape rule, then rebuild the node list (a fused node in its Relu's place) and
// drop the values the removed nodes wrote.
#include "training/fuse_batch_norm.h"

#include <optional>
#include <string>
#include <utility>

#include "runtime/ir/fusion.h"
#include "runtime/ops/op_descriptor.h"

namespace ucudnn::training {

namespace {

// What one match fuses: the BatchNormTrain, the Add when there is one (with Z, its other operand),
// and the Relu whose place the fused node takes.
struct Match {
  ir::NodeId batch_norm = -1, add = -1, relu = -1;
  ir::ValueId residual = ir::kNoValue;
};

class Matcher {
 public:
  explicit Matcher(const ir::Graph& graph)
      : graph_(graph), readers_(graph.values.size()), is_output_(graph.values.size(), false),
        taken_(graph.nodes.size(), false) {
    for (size_t n = 0; n < graph.nodes.size(); ++n)
      for (ir::ValueId id : graph.nodes[n].inputs)
        if (id != ir::kNoValue) readers_[id].push_back(static_cast<ir::NodeId>(n));  // once per input slot
    for (ir::ValueId id : graph.outputs) is_output_[id] = true;
  }

  // The match at node n, if any; its nodes are then taken (no other match uses them).
  std::optional<Match> match(ir::NodeId n) {
    const ir::Node& bn = graph_.nodes[n];
    if (bn.op != OpKind::kBatchNormTrain || bn.inputs.size() != 5 || bn.outputs.size() != 5 ||
        !ir::fused_activation(bn).empty())
      return std::nullopt;
    for (size_t o = 1; o < bn.outputs.size(); ++o)  // the fused node moves later: no reader may lie between
      if (bn.outputs[o] != ir::kNoValue && !readers_[bn.outputs[o]].empty()) return std::nullopt;
    Match m;
    m.batch_norm = n;
    const ir::NodeId next = sole_reader(bn.outputs[0]);
    if (next < 0) return std::nullopt;
    if (is_relu(next)) {
      m.relu = next;
    } else if (std::optional<ir::ValueId> z = residual_of(next, bn.outputs[0], bn.inputs[0])) {
      m.add = next;
      m.residual = *z;
      m.relu = sole_reader(graph_.nodes[next].outputs[0]);
      if (m.relu < 0 || !is_relu(m.relu)) return std::nullopt;
    } else {
      return std::nullopt;
    }
    for (ir::NodeId id : {m.batch_norm, m.add, m.relu})
      if (id >= 0) taken_[id] = true;
    return m;
  }

 private:
  // The one node reading `id` (in one input slot), when `id` is no graph output and no match took it.
  ir::NodeId sole_reader(ir::ValueId id) const {
    if (id == ir::kNoValue || is_output_[id] || readers_[id].size() != 1) return -1;
    const ir::NodeId n = readers_[id].front();
    return taken_[n] ? -1 : n;
  }

  bool is_relu(ir::NodeId n) const {
    const ir::Node& node = graph_.nodes[n];
    return node.op == OpKind::kRelu && node.inputs.size() == 1 && node.outputs.size() == 1;
  }

  // Z when node n is Add(y, Z) or Add(Z, y) with Z float32 of exactly X's shape (no broadcasting).
  std::optional<ir::ValueId> residual_of(ir::NodeId n, ir::ValueId y, ir::ValueId x) const {
    const ir::Node& add = graph_.nodes[n];
    if (add.op != OpKind::kAdd || add.inputs.size() != 2 || add.outputs.size() != 1 ||
        add.attrs.has(ir::kFusedActivationAttr))
      return std::nullopt;
    const ir::ValueId z = add.inputs[0] == y ? add.inputs[1] : add.inputs[0];
    if (z == ir::kNoValue || z == y) return std::nullopt;
    const ir::Value& zv = graph_.value(z);
    const ir::Value& xv = graph_.value(x);
    if (zv.dtype != DType::kFloat32 || xv.dtype != DType::kFloat32 || zv.shape != xv.shape) return std::nullopt;
    return z;
  }

  const ir::Graph& graph_;
  std::vector<std::vector<ir::NodeId>> readers_;
  std::vector<bool> is_output_;
  std::vector<bool> taken_;
};

// Removes the values marked `dropped` (no node reads or writes them any more, and they are neither
// inputs nor outputs), renumbering the rest in order; returns each old id's new one.
std::vector<ir::ValueId> drop_values(ir::Graph& graph, const std::vector<bool>& dropped) {
  std::vector<ir::ValueId> new_id(graph.values.size(), ir::kNoValue);
  std::vector<ir::Value> kept;
  for (size_t v = 0; v < graph.values.size(); ++v) {
    if (dropped[v]) continue;
    new_id[v] = static_cast<ir::ValueId>(kept.size());
    kept.push_back(std::move(graph.values[v]));
  }
  graph.values = std::move(kept);
  auto remap = [&new_id](ir::ValueId& id) {
    if (id != ir::kNoValue) id = new_id[static_cast<size_t>(id)];
  };
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    for (ir::ValueId& id : graph.nodes[n].inputs) remap(id);
    for (ir::ValueId& id : graph.nodes[n].outputs) {
      remap(id);
      if (id != ir::kNoValue) graph.value(id).producer = static_cast<ir::NodeId>(n);
    }
  }
  for (ir::ValueId& id : graph.inputs) remap(id);
  for (ir::ValueId& id : graph.outputs) remap(id);
  return new_id;
}

}  // namespace

Expected<BatchNormFusion> fuse_batch_norm_activations(ir::Graph& graph) {
  Matcher matcher(graph);
  std::vector<Match> matches;
  for (size_t n = 0; n < graph.nodes.size(); ++n)
    if (std::optional<Match> m = matcher.match(static_cast<ir::NodeId>(n))) matches.push_back(*m);

  // The fused nodes, each checked by its shape rule before anything changes.
  BatchNormFusion result;
  std::vector<std::optional<ir::Node>> in_place_of(graph.nodes.size());  // in_place_of[relu]: the fused node
  std::vector<bool> removed(graph.nodes.size(), false), dropped(graph.values.size(), false);
  for (const Match& m : matches) {
    ir::Node fused = graph.nodes[m.batch_norm];
    dropped[fused.outputs[0]] = true;
    if (m.add >= 0) {
      fused.inputs.push_back(m.residual);
      dropped[graph.nodes[m.add].outputs[0]] = true;
      removed[m.add] = true;
    }
    fused.attrs.set(ir::kFusedActivationAttr, std::string("Relu"));
    fused.outputs[0] = graph.nodes[m.relu].outputs[0];
    auto inferred = infer_node(graph, fused);
    if (!inferred) return inferred.status().with_context("fusing its activation into " + fused.describe());
    if ((*inferred)[0].shape != graph.value(fused.outputs[0]).shape)
      return internal_error("fusing " + fused.describe() + ": Y would change shape");
    removed[m.batch_norm] = true;
    in_place_of[m.relu] = std::move(fused);
    ++(m.add >= 0 ? result.residuals : result.relus);
  }

  std::vector<ir::Node> nodes;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    if (in_place_of[n]) nodes.push_back(std::move(*in_place_of[n]));
    else if (!removed[n]) nodes.push_back(std::move(graph.nodes[n]));
  }
  graph.nodes = std::move(nodes);
  result.new_id = drop_values(graph, dropped);  // also sets every producer to the new node order
  return result;
}

}  // namespace ucudnn::training
