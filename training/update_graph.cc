// build_update_graph (update_graph.h).
#include "training/update_graph.h"

#include <sstream>

#include "runtime/ops/op_descriptor.h"
#include "training/training_graph.h"

namespace ucudnn::training {

namespace {

ir::ValueId add_value(ir::Graph& g, std::string name, DType dtype, Shape shape, ir::NodeId producer = -1) {
  ir::Value v;
  v.name = std::move(name);
  v.dtype = dtype;
  v.shape = std::move(shape);
  v.producer = producer;
  return g.add_value(std::move(v));
}

}  // namespace

std::string OptimizerConfig::describe() const {
  std::ostringstream s;
  if (kind == Kind::kSgd)
    s << "sgd(momentum=" << momentum << ", dampening=" << dampening << ", weight_decay=" << weight_decay
      << ", nesterov=" << (nesterov ? 1 : 0) << ")";
  else
    s << "adamw(beta1=" << beta1 << ", beta2=" << beta2 << ", epsilon=" << epsilon
      << ", weight_decay=" << weight_decay << ")";
  return s.str();
}

Expected<ir::Graph> build_update_graph(int64_t elements, const OptimizerConfig& config) {
  ir::Graph g;
  g.name = "optimizer_update";
  g.opset = kTrainingOpset;
  const ir::ValueId lr = add_value(g, "lr", DType::kFloat32, {1});
  const ir::ValueId step = add_value(g, "step", DType::kInt64, {1});
  g.inputs = {lr, step};
  const bool sgd = config.kind == OptimizerConfig::Kind::kSgd;
  const std::vector<std::string> states = sgd ? std::vector<std::string>{"momentum_buffer"}
                                              : std::vector<std::string>{"m", "v"};
  const std::string name = "parameters";
  const Shape shape{elements};
  ir::Node node;
  node.name = name + "/update";
  node.op = sgd ? OpKind::kSgdUpdate : OpKind::kAdamWUpdate;
  node.opset = g.opset;
  fill_default_attributes(node);
  if (sgd) {
    node.attrs.set("momentum", static_cast<float>(config.momentum));
    node.attrs.set("dampening", static_cast<float>(config.dampening));
    node.attrs.set("nesterov", int64_t{config.nesterov ? 1 : 0});
  } else {
    node.attrs.set("beta1", static_cast<float>(config.beta1));
    node.attrs.set("beta2", static_cast<float>(config.beta2));
    node.attrs.set("epsilon", static_cast<float>(config.epsilon));
  }
  node.attrs.set("weight_decay", static_cast<float>(config.weight_decay));
  node.inputs.push_back(add_value(g, name, DType::kFloat32, shape));
  node.inputs.push_back(add_value(g, name + "/grad", DType::kFloat32, shape));
  for (const std::string& s : states) node.inputs.push_back(add_value(g, name + "/" + s, DType::kFloat32, shape));
  for (ir::ValueId id : node.inputs) g.inputs.push_back(id);
  node.inputs.push_back(lr);
  node.inputs.push_back(step);
  node.outputs.push_back(add_value(g, name + "/updated", DType::kFloat32, shape, /*producer=*/0));
  for (const std::string& s : states)
    node.outputs.push_back(add_value(g, name + "/" + s + "/updated", DType::kFloat32, shape, /*producer=*/0));
  g.outputs = node.outputs;
  g.nodes.push_back(std::move(node));
  UCUDNN_RETURN_IF_ERROR(infer_node_outputs(g, 0));
  UCUDNN_RETURN_IF_ERROR(g.validate());
  return g;
}

}  // namespace ucudnn::training
