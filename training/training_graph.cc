// build_training_graph and build_evaluation_graph (training_graph.h).
#include "training/training_graph.h"

#include <algorithm>
#include <set>

#include "optimizer/passes/passes.h"
#include "runtime/ops/op_descriptor.h"
#include "training/autodiff.h"
#include "training/fuse_batch_norm.h"

namespace ucudnn::training {

namespace {

bool is_float_constant(const ir::Graph& g, ir::ValueId id) {
  return id != ir::kNoValue && g.value(id).constant.has_value() && g.value(id).dtype == DType::kFloat32;
}

// The inputs of `node` that are parameters when they are float constants.
std::vector<size_t> parameter_slots(const ir::Graph& g, const ir::Node& node) {
  switch (node.op) {
    case OpKind::kConv: return {1, 2};
    case OpKind::kGemm: return {0, 1, 2};
    case OpKind::kMatMul: return {0, 1};
    case OpKind::kBatchNormalization: return {1, 2};
    case OpKind::kPRelu: return {1};
    case OpKind::kAdd: {  // a bias right after a MatMul
      std::vector<size_t> slots;
      for (size_t i = 0; i < 2; ++i) {
        const ir::ValueId other = node.inputs[1 - i];
        if (g.value(other).producer >= 0 && g.nodes[g.value(other).producer].op == OpKind::kMatMul)
          slots.push_back(i);
      }
      return slots;
    }
    default: return {};
  }
}

// Turns the constants `ids` into graph inputs (appended to graph.inputs in order).
void make_inputs(ir::Graph& g, const std::vector<ir::ValueId>& ids) {
  for (ir::ValueId id : ids) {
    g.value(id).constant.reset();
    g.inputs.push_back(id);
  }
}

ir::ValueId add_input(ir::Graph& g, const std::string& name, DType dtype, Shape shape) {
  ir::Value v;
  v.name = name;
  v.dtype = dtype;
  v.shape = std::move(shape);
  const ir::ValueId id = g.add_value(std::move(v));
  g.inputs.push_back(id);
  return id;
}

ir::ValueId add_output_value(ir::Graph& g, const std::string& name, ir::NodeId producer) {
  ir::Value v;
  v.name = name;
  v.producer = producer;
  return g.add_value(std::move(v));
}


// BatchNormalization(X, scale, B, mean, var) → BatchNormTrain(...) with outputs (Y, new mean,
// new var, saved mean, saved inv std). Returns the new running-statistic outputs.
Expected<std::vector<ir::ValueId>> to_batch_norm_train(ir::Graph& g, size_t n) {
  ir::Node& node = g.nodes[n];
  for (size_t i = 1; i < node.outputs.size(); ++i)
    if (node.outputs[i] != ir::kNoValue)
      return unsupported("cannot train " + node.describe() + ": its optional outputs are used");
  if (node.attrs.has("training_mode") && node.attrs.get_int("training_mode") != 0)
    return unsupported("cannot train " + node.describe() + ": training_mode=1 models are not supported");
  ir::Attributes attrs;
  attrs.set("epsilon", node.attrs.get_float("epsilon"));
  attrs.set("momentum", node.attrs.get_float("momentum"));
  node.op = OpKind::kBatchNormTrain;
  node.opset = kTrainingOpset;
  node.attrs = std::move(attrs);
  node.outputs.resize(1);
  const std::string base = node.name;
  const auto producer = static_cast<ir::NodeId>(n);
  std::vector<ir::ValueId> stats;
  for (const char* suffix : {"/running_mean", "/running_var", "/saved_mean", "/saved_inv_std"}) {
    const ir::ValueId id = add_output_value(g, base + suffix, producer);
    g.nodes[n].outputs.push_back(id);
    if (stats.size() < 2) stats.push_back(id);
  }
  UCUDNN_RETURN_IF_ERROR(infer_node_outputs(g, static_cast<ir::NodeId>(n)));
  return stats;
}

// Dropout(X, ratio, training_mode) → DropoutTrain(X, seed) with outputs (Y, mask).
Status to_dropout_train(ir::Graph& g, size_t n, ir::ValueId seed) {
  ir::Node& node = g.nodes[n];
  float ratio = 0.5f;
  if (node.inputs.size() > 1 && node.inputs[1] != ir::kNoValue) {
    const ir::Value& r = g.value(node.inputs[1]);
    if (!r.constant || r.dtype != DType::kFloat32)
      return unsupported("cannot train " + node.describe() + ": its ratio must be a float constant");
    ratio = r.constant->data<float>()[0];
  }
  if (node.outputs.size() > 1 && node.outputs[1] != ir::kNoValue)
    return unsupported("cannot train " + node.describe() + ": its mask output is used");
  node.op = OpKind::kDropoutTrain;
  node.opset = kTrainingOpset;
  node.attrs = {};
  node.attrs.set("ratio", ratio);
  node.inputs = {node.inputs[0], seed};
  node.outputs.resize(1);
  g.nodes[n].outputs.push_back(add_output_value(g, g.nodes[n].name + "/mask", static_cast<ir::NodeId>(n)));
  return infer_node_outputs(g, static_cast<ir::NodeId>(n));
}

// Appends `op` over `inputs` to g with outputs named `names`; returns them.
Expected<std::vector<ir::ValueId>> append(ir::Graph& g, OpKind op, const std::string& name,
                                          std::vector<ir::ValueId> inputs, ir::Attributes attrs,
                                          const std::vector<std::string>& outputs) {
  ir::Node node;
  node.name = name;
  node.op = op;
  node.opset = kTrainingOpset;
  node.inputs = std::move(inputs);
  node.attrs = std::move(attrs);
  fill_default_attributes(node);
  for (const std::string& out : outputs)
    node.outputs.push_back(add_output_value(g, out, static_cast<ir::NodeId>(g.nodes.size())));
  g.nodes.push_back(std::move(node));
  UCUDNN_RETURN_IF_ERROR(infer_node_outputs(g, static_cast<ir::NodeId>(g.nodes.size() - 1)));
  return g.nodes.back().outputs;
}

}  // namespace

std::vector<UntiedUse> untie_shared_parameters(ir::Graph& g) {
  std::vector<UntiedUse> untied;
  std::set<ir::ValueId> used;
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    std::vector<size_t> slots = parameter_slots(g, g.nodes[n]);
    if (g.nodes[n].op == OpKind::kBatchNormalization) slots.insert(slots.end(), {3, 4});  // running statistics
    for (size_t slot : slots) {
      const ir::ValueId id = slot < g.nodes[n].inputs.size() ? g.nodes[n].inputs[slot] : ir::kNoValue;
      if (!is_float_constant(g, id) || used.insert(id).second) continue;
      ir::Value copy = g.value(id);
      copy.name = g.value(id).name + "@" + g.nodes[n].name;
      untied.push_back({g.nodes[n].name, slot, g.value(id).name, copy.name});
      g.nodes[n].inputs[slot] = g.add_value(std::move(copy));  // shares the constant's bytes until trained
    }
  }
  return untied;
}

TrainableValues find_trainable_values(const ir::Graph& g) {
  TrainableValues t;
  std::set<ir::ValueId> seen;
  for (const ir::Node& node : g.nodes) {
    for (size_t slot : parameter_slots(g, node))
      if (slot < node.inputs.size() && is_float_constant(g, node.inputs[slot]) && seen.insert(node.inputs[slot]).second)
        t.parameters.push_back(node.inputs[slot]);
    if (node.op == OpKind::kBatchNormalization)
      for (size_t slot : {3, 4})
        if (is_float_constant(g, node.inputs[slot]) && seen.insert(node.inputs[slot]).second)
          t.running_stats.push_back(node.inputs[slot]);
  }
  return t;
}

namespace {

// fuse_pointwise over the step. The pass drops values and renumbers the rest, so the ids `t` holds —
// all of them graph inputs — are found again by their place in graph.inputs (which the pass keeps).
Status fuse_training_pointwise(TrainingGraph& t) {
  ir::Graph& g = t.graph;
  auto position = [&](ir::ValueId id) -> size_t {
    return id == ir::kNoValue ? SIZE_MAX
                              : static_cast<size_t>(std::find(g.inputs.begin(), g.inputs.end(), id) - g.inputs.begin());
  };
  const size_t labels = position(t.labels), seed = position(t.dropout_seed);
  std::vector<size_t> parameters, stats;
  for (ir::ValueId id : t.parameters) parameters.push_back(position(id));
  for (ir::ValueId id : t.running_stats) stats.push_back(position(id));
  optimizer::PassStats pass_stats;
  UCUDNN_RETURN_IF_ERROR(optimizer::fuse_pointwise(g, &pass_stats).with_context("fusing the training step"));
  if (g.inputs.size() != t.model_inputs + (t.dropout_seed != ir::kNoValue ? 2 : 1) + parameters.size() + stats.size())
    return internal_error("fuse_pointwise changed the training graph's inputs");
  auto at = [&](size_t p) { return p == SIZE_MAX ? ir::kNoValue : g.inputs[p]; };
  t.labels = at(labels);
  t.dropout_seed = at(seed);
  for (size_t k = 0; k < parameters.size(); ++k) t.parameters[k] = at(parameters[k]);
  for (size_t k = 0; k < stats.size(); ++k) t.running_stats[k] = at(stats[k]);
  return g.validate().with_context("after fusing the training step");
}

}  // namespace

Expected<TrainingGraph> build_training_graph(const ir::Graph& inference, const TrainingGraphOptions& options) {
  if (inference.outputs.empty()) return invalid_argument("model '" + inference.name + "' has no outputs");
  const ir::Value& logits = inference.value(inference.outputs[0]);
  if (logits.dtype != DType::kFloat32 || logits.shape.size() != 2)
    return unsupported("training needs the model's first output to be the logits float32[N, classes]; '" +
                       logits.name + "' of model '" + inference.name + "' is " + dtype_name(logits.dtype) +
                       shape_to_string(logits.shape));

  TrainingGraph t;
  t.graph = inference;
  ir::Graph& g = t.graph;
  g.name = inference.name + "/train";
  t.model_inputs = g.inputs.size();
  ir::ValueId logits_id = g.outputs[0];
  const int64_t batch = logits.shape[0];

  t.labels = add_input(g, "labels", DType::kInt64, {batch});
  const bool has_dropout =
      std::any_of(g.nodes.begin(), g.nodes.end(), [](const ir::Node& n) { return n.op == OpKind::kDropout; });
  if (has_dropout) t.dropout_seed = add_input(g, "dropout_seed", DType::kInt64, {1});

  const TrainableValues trainable = find_trainable_values(g);
  t.parameters = trainable.parameters;
  t.running_stats = trainable.running_stats;
  make_inputs(g, t.parameters);
  make_inputs(g, t.running_stats);

  // Training mode: BatchNormTrain (its running statistics as outputs), DropoutTrain.
  std::vector<ir::ValueId> new_stats(t.running_stats.size(), ir::kNoValue);
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    if (g.nodes[n].op == OpKind::kBatchNormalization) {
      const ir::ValueId mean_in = g.nodes[n].inputs[3], var_in = g.nodes[n].inputs[4];
      UCUDNN_ASSIGN_OR_RETURN(std::vector<ir::ValueId> outs, to_batch_norm_train(g, n));
      for (size_t k = 0; k < t.running_stats.size(); ++k) {
        if (t.running_stats[k] != mean_in && t.running_stats[k] != var_in) continue;
        if (new_stats[k] != ir::kNoValue || mean_in == var_in)
          return unsupported("the running statistic '" + g.value(t.running_stats[k]).name +
                             "' is updated by more than one BatchNormalization; untie_shared_parameters first");
        new_stats[k] = t.running_stats[k] == mean_in ? outs[0] : outs[1];
      }
    } else if (g.nodes[n].op == OpKind::kDropout) {
      UCUDNN_RETURN_IF_ERROR(to_dropout_train(g, n, t.dropout_seed));
    }
  }
  if (options.fuse_batch_norm) {
    // The pass renumbers values: every id held so far follows it.
    UCUDNN_ASSIGN_OR_RETURN(const BatchNormFusion fusion, fuse_batch_norm_activations(g));
    for (ir::ValueId* id : {&logits_id, &t.labels, &t.dropout_seed}) *id = fusion.map(*id);
    for (std::vector<ir::ValueId>* ids : {&t.parameters, &t.running_stats, &new_stats})
      for (ir::ValueId& id : *ids) id = fusion.map(id);
  }

  ir::Attributes loss_attrs;
  loss_attrs.set("label_smoothing", options.label_smoothing);
  UCUDNN_ASSIGN_OR_RETURN(std::vector<ir::ValueId> loss,
                          append(g, OpKind::kSoftmaxCrossEntropyMean, "loss", {logits_id, t.labels},
                                 std::move(loss_attrs), {"loss", "loss/log_prob"}));

  ir::Value one;
  one.name = "loss/grad_seed";
  one.dtype = DType::kFloat32;
  const float value = 1.0f;
  one.constant = Tensor::from_floats(Shape{}, std::span<const float>(&value, 1));
  const ir::ValueId seed = g.add_value(std::move(one));
  UCUDNN_ASSIGN_OR_RETURN(std::vector<ir::ValueId> grads, append_gradients(g, {{loss[0], seed}}, t.parameters));

  g.outputs = {loss[0], logits_id};
  t.first_gradient_output = g.outputs.size();
  for (ir::ValueId grad : grads) g.outputs.push_back(grad);
  t.first_running_stat_output = g.outputs.size();
  for (ir::ValueId s : new_stats) g.outputs.push_back(s);
  UCUDNN_RETURN_IF_ERROR(g.validate());
  if (options.fuse_pointwise) UCUDNN_RETURN_IF_ERROR(fuse_training_pointwise(t));
  return t;
}

Expected<ir::Graph> build_evaluation_graph(const ir::Graph& inference) {
  ir::Graph g = inference;
  g.name = inference.name + "/eval";
  const TrainableValues trainable = find_trainable_values(g);
  make_inputs(g, trainable.parameters);
  make_inputs(g, trainable.running_stats);
  UCUDNN_RETURN_IF_ERROR(g.validate());
  return g;
}

}  // namespace ucudnn::training
