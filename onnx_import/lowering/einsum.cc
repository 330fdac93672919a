// The lowering of Einsum (einsum.h).
#include "onnx_import/lowering/einsum.h"

#include <algorithm>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "onnx_import/lowering/lowering_builder.h"
#include "runtime/ops/einsum.h"
#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {

bool has(const std::string& labels, char c) { return labels.find(c) != std::string::npos; }

// Emits the nodes of one Einsum's lowering; each helper gets the labels of the value it is given.
class EinsumLowering {
 public:
  EinsumLowering(ir::Graph& graph, const ir::Node& node, std::vector<ir::Node>& out, EinsumEquation e)
      : build_(graph, node, out, std::max(node.opset, 13)), e_(std::move(e)) {}

  // The sum over the labels of operand t that neither the other operand nor the output has.
  std::string sum_alone(size_t t, ir::ValueId& value) {
    const std::string& labels = e_.operands[t];
    const std::string other = e_.operands.size() == 2 ? e_.operands[1 - t] : std::string();
    std::string kept;
    std::vector<int64_t> axes;
    for (size_t d = 0; d < labels.size(); ++d) {
      if (has(e_.output, labels[d]) || has(other, labels[d])) kept += labels[d];
      else axes.push_back(static_cast<int64_t>(d));
    }
    if (axes.empty()) return labels;
    ir::Attributes attrs;
    attrs.set("keepdims", int64_t{0});
    value = build_.emit(OpKind::kReduceSum, "sum" + std::to_string(t), {value, build_.int64s("sum_axes", axes)},
                        DType::kFloat32, sized(kept, value, labels), ir::kNoValue, std::move(attrs));
    return kept;
  }

  // `value` with labels `from` put in the order `to` (no node when they are in it already).
  ir::ValueId transpose(ir::ValueId value, const std::string& from, const std::string& to, const std::string& what,
                        ir::ValueId into = ir::kNoValue) {
    if (from == to && into == ir::kNoValue) return value;
    std::vector<int64_t> perm;
    for (char c : to) perm.push_back(static_cast<int64_t>(from.find(c)));
    ir::Attributes attrs;
    attrs.set("perm", perm);
    return build_.emit(OpKind::kTranspose, what, {value}, DType::kFloat32, sized(to, value, from), into,
                       std::move(attrs));
  }

  ir::ValueId reshape(ir::ValueId value, const Shape& shape, const std::string& what, ir::ValueId into = ir::kNoValue) {
    if (build_.graph().value(value).shape == shape && into == ir::kNoValue) return value;
    return build_.emit(OpKind::kReshape, what, {value, build_.int64s(what + "_shape", shape)}, DType::kFloat32, shape,
                       into);
  }

  ir::ValueId matmul(ir::ValueId a, ir::ValueId b, const Shape& shape) {
    return build_.emit(OpKind::kMatMul, "matmul", {a, b}, DType::kFloat32, shape);
  }

  // The shape of `labels`, taking each label's size from the value that has it (1 on broadcast dims).
  Shape sized(const std::string& labels, ir::ValueId value, const std::string& value_labels = "") {
    const Shape& shape = build_.graph().value(value).shape;
    Shape s;
    for (char c : labels) {
      const size_t d = value_labels.empty() ? std::string::npos : value_labels.find(c);
      s.push_back(d != std::string::npos ? shape[d] : e_.sizes.at(c));
    }
    return s;
  }

 private:
  LoweringBuilder build_;
  EinsumEquation e_;
};


// Sizes of `labels` as operand `labels_of` has them, or all 1 where it lacks them.
Shape dims_in(const std::string& labels, const std::string& operand, const Shape& shape) {
  Shape s;
  for (char c : labels) {
    const size_t d = operand.find(c);
    s.push_back(d == std::string::npos ? 1 : shape[d]);
  }
  return s;
}

int64_t product(const Shape& s) { return shape_numel(s); }

Status lower_one(ir::Graph& graph, const ir::Node& node, std::vector<ir::Node>& out) {
  std::vector<Shape> shapes;
  for (ir::ValueId id : node.inputs) shapes.push_back(graph.value(id).shape);
  UCUDNN_ASSIGN_OR_RETURN(EinsumEquation e, parse_einsum(node.attrs.get_string("equation"), shapes));
  const ir::ValueId y = node.outputs[0];
  EinsumLowering lower(graph, node, out, e);
  ir::ValueId a = node.inputs[0];
  // The summed-alone labels go first (sum_alone reads sizes from the value's own shape: the operand's).
  const std::string a_labels = lower.sum_alone(0, a);
  if (e.operands.size() == 1) {
    lower.transpose(a, a_labels, e.output, "order", y);
    return Status::ok();
  }
  ir::ValueId b = node.inputs[1];
  const std::string b_labels = lower.sum_alone(1, b);
  std::string batch, free_a, free_b, summed;
  for (char c : e.output) {
    if (has(a_labels, c) && has(b_labels, c)) batch += c;
  }
  for (char c : a_labels) {
    if (has(b_labels, c) && !has(e.output, c)) summed += c;
    else if (!has(b_labels, c)) free_a += c;
  }
  for (char c : b_labels)
    if (!has(a_labels, c)) free_b += c;
  for (char c : summed)
    if (shapes[0][e.operands[0].find(c)] != shapes[1][e.operands[1].find(c)])
      return unsupported(node.describe() + ": summed label '" + std::string(1, c) + "' broadcast between operands");
  const Shape& a_shape = graph.value(a).shape;
  const Shape& b_shape = graph.value(b).shape;
  const Shape a_batch = dims_in(batch, a_labels, a_shape), b_batch = dims_in(batch, b_labels, b_shape);
  const Shape free_a_dims = dims_in(free_a, a_labels, a_shape), free_b_dims = dims_in(free_b, b_labels, b_shape);
  const int64_t m = product(free_a_dims), k = product(dims_in(summed, a_labels, a_shape)), n = product(free_b_dims);
  // A: [batch, free_a, summed] → [batch..., m, k]; B: [batch, summed, free_b] → [batch..., k, n]. A batch label
  // one operand lacks is a dim of 1 there, which MatMul broadcasts.
  auto with = [](Shape s, std::initializer_list<int64_t> tail) {
    s.insert(s.end(), tail);
    return s;
  };
  const std::string a_order = batch + free_a + summed, b_order = batch + summed + free_b;
  auto arrange = [&](ir::ValueId v, const std::string& labels, const std::string& order, const Shape& shape,
                     const std::string& what) {
    return lower.reshape(lower.transpose(v, labels, order, what + "_order"), shape, what + "_matrix");
  };
  a = arrange(a, a_labels, a_order, with(a_batch, {m, k}), "a");
  b = arrange(b, b_labels, b_order, with(b_batch, {k, n}), "b");
  Shape batch_dims;
  for (size_t i = 0; i < batch.size(); ++i) batch_dims.push_back(std::max(a_batch[i], b_batch[i]));
  const ir::ValueId product_value = lower.matmul(a, b, with(batch_dims, {m, n}));
  // [batch..., m, n] → [batch, free_a, free_b] → the output's order.
  const std::string natural = batch + free_a + free_b;
  Shape natural_shape = batch_dims;
  natural_shape.insert(natural_shape.end(), free_a_dims.begin(), free_a_dims.end());
  natural_shape.insert(natural_shape.end(), free_b_dims.begin(), free_b_dims.end());
  if (natural == e.output) {
    lower.reshape(product_value, natural_shape, "result", y);
  } else {
    lower.transpose(lower.reshape(product_value, natural_shape, "result"), natural, e.output, "order", y);
  }
  return Status::ok();
}

}  // namespace

Status lower_einsums(ir::Graph& graph) { return lower_each(graph, OpKind::kEinsum, lower_one, "Einsum"); }

}  // namespace ucudnn
