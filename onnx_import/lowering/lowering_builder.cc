// lower_each and LoweringBuilder (lowering_builder.h).
#include "onnx_import/lowering/lowering_builder.h"

#include <string>
#include <utility>

#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

Status lower_each(ir::Graph& graph, OpKind kind, LowerNode lower, const char* what) {
  bool any = false;
  for (const ir::Node& node : graph.nodes) any |= node.op == kind;
  if (!any) return Status::ok();
  std::vector<ir::Node> nodes;
  nodes.reserve(graph.nodes.size());
  for (const ir::Node& node : graph.nodes) {
    if (node.op != kind) {
      nodes.push_back(node);
      continue;
    }
    const size_t first = nodes.size();
    UCUDNN_RETURN_IF_ERROR(lower(graph, node, nodes));
    for (size_t n = first; n < nodes.size(); ++n) {
      UCUDNN_ASSIGN_OR_RETURN(std::vector<ValueInfo> inferred, infer_node(graph, nodes[n]));
      for (size_t o = 0; o < nodes[n].outputs.size(); ++o) {
        const ir::Value& v = graph.value(nodes[n].outputs[o]);
        if (inferred[o].shape != v.shape || inferred[o].dtype != v.dtype)
          return internal_error(nodes[n].describe() + ", lowered from " + node.describe() + ": gives " +
                                shape_to_string(inferred[o].shape) + ", expected " + shape_to_string(v.shape));
      }
    }
  }
  graph.nodes = std::move(nodes);
  for (size_t n = 0; n < graph.nodes.size(); ++n)
    for (ir::ValueId id : graph.nodes[n].outputs)
      if (id != ir::kNoValue) graph.value(id).producer = static_cast<ir::NodeId>(n);
  return graph.validate().with_context(std::string("after lowering ") + what);
}

ir::ValueId LoweringBuilder::emit(OpKind op, const std::string& what, std::vector<ir::ValueId> inputs, DType dtype,
                                  const Shape& shape, ir::ValueId into, ir::Attributes attrs) {
  if (into == ir::kNoValue) into = intermediate(what, dtype, shape);
  ir::Node n;
  n.name = what.empty() ? node_.name : node_.name + "/" + what;
  n.op = op;
  n.opset = opset_;
  n.inputs = std::move(inputs);
  n.outputs = {into};
  n.attrs = std::move(attrs);
  fill_default_attributes(n);
  out_.push_back(std::move(n));
  return into;
}

ir::ValueId LoweringBuilder::chain(OpKind op, const std::string& what, const std::vector<ir::ValueId>& inputs,
                                   DType dtype, ir::ValueId into) {
  ir::ValueId result = inputs[0];
  Shape shape = graph_.value(result).shape;
  for (size_t i = 1; i < inputs.size(); ++i) {
    Shape next;
    broadcast_shapes(shape, graph_.value(inputs[i]).shape, &next);  // the lowered op's shape rule checked they do
    shape = std::move(next);
    result = emit(op, what + std::to_string(i), {result, inputs[i]}, dtype, shape,
                  i + 1 == inputs.size() ? into : ir::kNoValue);
  }
  return result;
}

ir::ValueId LoweringBuilder::intermediate(const std::string& what, DType dtype, const Shape& shape) {
  return graph_.add_value({graph_.unused_value_name(node_.name + "/" + what), dtype, shape, std::nullopt, -1});
}

ir::ValueId LoweringBuilder::constant(const std::string& what, Tensor data) {
  const DType dtype = data.dtype();
  const Shape shape = data.shape();
  return graph_.add_value({graph_.unused_value_name(node_.name + "/" + what), dtype, shape, std::move(data), -1});
}

ir::ValueId LoweringBuilder::int64s(const std::string& what, const std::vector<int64_t>& values) {
  return constant(what, Tensor::from_int64s({static_cast<int64_t>(values.size())}, values));
}

ir::ValueId LoweringBuilder::int64_scalar(const std::string& what, int64_t value) {
  return constant(what, Tensor::from_int64s({}, {&value, 1}));
}

ir::ValueId LoweringBuilder::iota(const std::string& what, int64_t count) {
  return emit(
      OpKind::kRange, what,
      {int64_scalar(what + "_start", 0), int64_scalar(what + "_limit", count), int64_scalar(what + "_delta", 1)},
      DType::kInt64, {count});
}

}  // namespace ucudnn
