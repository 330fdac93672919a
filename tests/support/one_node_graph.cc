// One-node graphs for op tests (see one_node_graph.h).
#include "tests/support/one_node_graph.h"

#include <random>

#include "onnx_import/lowering/lowering.h"
#include "runtime/ops/op_descriptor.h"
#include "tests/support/tensor_checks.h"

namespace ucudnn_test {

using ucudnn::DType;
using ucudnn::Shape;
using ucudnn::Tensor;
namespace ir = ucudnn::ir;

InputSpec input(Shape shape, double low, double high) {
  return {DType::kFloat32, std::move(shape), {}, false, low, high};
}
InputSpec input_values(Shape shape, std::vector<double> values) {
  return {DType::kFloat32, std::move(shape), std::move(values), false};
}
InputSpec weight(Shape shape, double low, double high) {
  return {DType::kFloat32, std::move(shape), {}, true, low, high};
}
InputSpec weight_values(Shape shape, std::vector<double> values) {
  return {DType::kFloat32, std::move(shape), std::move(values), true};
}
InputSpec typed_input(DType dtype, Shape shape, std::vector<double> values) {
  return {dtype, std::move(shape), std::move(values), false};
}
InputSpec typed_constant(DType dtype, Shape shape, std::vector<double> values) {
  return {dtype, std::move(shape), std::move(values), true};
}
InputSpec ints(std::vector<double> values) {
  const auto n = static_cast<int64_t>(values.size());
  return {DType::kInt64, {n}, std::move(values), true};
}
InputSpec absent() { return {}; }

ir::Node make_node(const std::string& name, ucudnn::OpKind op, const AttrList& attrs, size_t num_inputs,
                   int num_outputs, int opset) {
  ir::Node node;
  node.name = name;
  node.op = op;
  node.opset = opset;
  for (size_t i = 0; i < num_inputs; ++i) node.inputs.push_back(static_cast<ir::ValueId>(i));
  for (int j = 0; j < num_outputs; ++j) node.outputs.push_back(static_cast<ir::ValueId>(num_inputs) + j);
  for (const ucudnn::AttrSpec& spec : ucudnn::op_descriptor(op).attrs)
    if (spec.presence == ucudnn::AttrPresence::kDefault) node.attrs.set(spec.name, *spec.default_value);
  for (const auto& [key, value] : attrs) node.attrs.set(key, value);
  return node;
}

std::vector<const Tensor*> OneNodeGraph::node_inputs() const {
  std::vector<const Tensor*> tensors;
  for (ir::ValueId id : node().inputs) {
    const Tensor* tensor = nullptr;
    if (id != ir::kNoValue && graph.value(id).constant) tensor = &*graph.value(id).constant;
    for (size_t i = 0; id != ir::kNoValue && i < graph.inputs.size(); ++i)
      if (graph.inputs[i] == id) tensor = &feeds[i];
    tensors.push_back(tensor);
  }
  return tensors;
}

ucudnn::Expected<OneNodeGraph> make_one_node_graph(const std::string& name, ucudnn::OpKind op, int opset,
                                                   const std::vector<InputSpec>& inputs, const AttrList& attrs,
                                                   int num_outputs, uint32_t seed) {
  OneNodeGraph built;
  ir::Graph& g = built.graph;
  g.name = name;
  g.opset = opset;
  std::mt19937 random(seed);
  ir::Node node = make_node(name, op, attrs, 0, 0, opset);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const InputSpec& spec = inputs[i];
    if (spec.dtype == DType::kUndefined) {
      node.inputs.push_back(ir::kNoValue);
      continue;
    }
    Tensor value = spec.values.empty() ? make_random_tensor(spec.dtype, spec.shape, random, spec.low, spec.high)
                                       : tensor_of_values(spec.dtype, spec.shape, spec.values);
    ir::Value v{"in" + std::to_string(i), spec.dtype, spec.shape, std::nullopt, -1};
    if (spec.constant) v.constant = value;
    const ir::ValueId id = g.add_value(std::move(v));
    if (!spec.constant) {
      g.inputs.push_back(id);
      built.feeds.push_back(std::move(value));
    }
    node.inputs.push_back(id);
  }
  for (int j = 0; j < num_outputs; ++j) {
    node.outputs.push_back(g.add_value({"out" + std::to_string(j), DType::kUndefined, {}, std::nullopt, 0}));
    g.outputs.push_back(node.outputs.back());
  }
  g.nodes.push_back(node);
  UCUDNN_ASSIGN_OR_RETURN(std::vector<ucudnn::ValueInfo> outputs, ucudnn::infer_node(g, g.nodes[0]));
  for (int j = 0; j < num_outputs; ++j) {
    g.value(node.outputs[j]).dtype = outputs[j].dtype;
    g.value(node.outputs[j]).shape = outputs[j].shape;
  }
  UCUDNN_RETURN_IF_ERROR(g.validate());
  built.op_node = g.nodes.front();
  UCUDNN_RETURN_IF_ERROR(ucudnn::lower_composite_ops(g));
  return built;
}

}  // namespace ucudnn_test
