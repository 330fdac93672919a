// Forms the importer rewrites once a node's inputs have dtypes and shapes, just before its shape rule runs
// (infer_and_fold): the older opsets' broadcasting (Note [legacy broadcasting], upgrade.cc), and integer
// forms of ops whose kernels take float32:
//   Neg of int32/int64 X      → Sub(0, X), which every backend runs on integers and constant folding folds
//                               (exporters negate axes: the expanded LayerNormalization);
//   Pow of float32 X and an integer exponent Y → Pow(X, Cast(Y, float32)): exact for exponents up to 2^24
//                               in magnitude (beyond, the float rounds; only |X| = 1 keeps a finite power
//                               there, and an odd exponent may become even).
#include "onnx_import/internal.h"

namespace ucudnn::onnx_import {

namespace {

// Inserts before node n a node `op` of `inputs` writing `output` (a new value, produced by it); node n is
// then node n + 1. Producers after it are renumbered.
void insert_before(ir::Graph& graph, size_t n, OpKind op, std::vector<ir::ValueId> inputs, ir::ValueId output,
                   ir::Attributes attrs = {}) {
  ir::Node node;
  node.name = graph.value(output).name;
  node.op = op;
  node.opset = graph.nodes[n].opset;
  node.inputs = std::move(inputs);
  node.outputs = {output};
  node.attrs = std::move(attrs);
  fill_default_attributes(node);
  for (ir::Value& v : graph.values)
    if (v.producer >= static_cast<ir::NodeId>(n)) ++v.producer;
  graph.value(output).producer = static_cast<ir::NodeId>(n);
  graph.nodes.insert(graph.nodes.begin() + static_cast<std::ptrdiff_t>(n), std::move(node));
}

bool is_integer(DType d) { return d == DType::kInt32 || d == DType::kInt64; }

// Note [legacy broadcasting] (upgrade.cc).
Status resolve_legacy_broadcast(ir::Graph& graph, size_t n) {
  const int64_t axis = graph.nodes[n].attrs.get_int(kLegacyBroadcastAttr);
  graph.nodes[n].attrs.erase(kLegacyBroadcastAttr);
  const ir::Node& node = graph.nodes[n];
  const ir::ValueId b_id = node.inputs[1];
  const Shape a = graph.value(node.inputs[0]).shape;
  const Shape b = graph.value(b_id).shape;
  const std::string shapes = "A " + shape_to_string(a) + ", B " + shape_to_string(b);
  if (axis == kLegacySameShape) {
    if (a == b) return Status::ok();
    return invalid_model(node.describe() + ": " + shapes + " differ, and before opset 7 only broadcast=1 broadcasts");
  }
  if (node.op == OpKind::kPRelu && (b.size() == a.size() || shape_numel(b) == 1)) return Status::ok();
  const auto rank_a = static_cast<int64_t>(a.size()), rank_b = static_cast<int64_t>(b.size());
  if (axis + rank_b > rank_a)
    return invalid_model(node.describe() + ": " + shapes + ": B does not fit in A from axis " + std::to_string(axis));
  for (int64_t i = 0; i < rank_b; ++i)
    if (b[static_cast<size_t>(i)] != a[static_cast<size_t>(axis + i)] && b[static_cast<size_t>(i)] != 1)
      return invalid_model(node.describe() + ": " + shapes + ": B's dim " + std::to_string(i) +
                           " does not match A's dim " + std::to_string(axis + i));
  if (axis + rank_b == rank_a) return Status::ok();  // B is A's trailing dims: numpy aligns it there too
  Shape target = b;
  target.resize(static_cast<size_t>(rank_a - axis), 1);
  const std::string base = node.name + "/legacy_broadcast";
  std::vector<int64_t> dims(target.begin(), target.end());
  Tensor shape_tensor = Tensor::from_int64s({static_cast<int64_t>(dims.size())}, dims);
  const ir::ValueId shape_id =
      graph.add_value({graph.unused_value_name(base + "_shape"), DType::kInt64, {static_cast<int64_t>(dims.size())},
                       std::move(shape_tensor), -1});
  const DType dtype = graph.value(b_id).dtype;
  const ir::ValueId reshaped = graph.add_value({graph.unused_value_name(base), dtype, target, std::nullopt, -1});
  insert_before(graph, n, OpKind::kReshape, {b_id, shape_id}, reshaped);
  graph.nodes[n + 1].inputs[1] = reshaped;
  return Status::ok();
}

// Neg of integers as Sub(0, X).
void rewrite_integer_neg(ir::Graph& graph, size_t n) {
  const ir::Value& x = graph.value(graph.nodes[n].inputs[0]);
  const DType dtype = x.dtype;
  Tensor zero = std::move(Tensor::allocate(dtype, {})).value();  // a scalar: 4 or 8 bytes, cannot fail
  if (dtype == DType::kInt32) {
    zero.data<int32_t>()[0] = 0;
  } else {
    zero.data<int64_t>()[0] = 0;
  }
  const ir::ValueId zero_id = graph.add_value(
      {graph.unused_value_name(graph.nodes[n].name + "/zero"), dtype, {}, std::move(zero), -1});
  ir::Node& node = graph.nodes[n];
  node.op = OpKind::kSub;
  node.inputs = {zero_id, node.inputs[0]};
  node.attrs = {};
}

// Pow's integer exponent cast to float32 (a Cast inserted before it).
void rewrite_integer_exponent(ir::Graph& graph, size_t n) {
  const ir::ValueId y = graph.nodes[n].inputs[1];
  const Shape shape = graph.value(y).shape;
  const ir::ValueId cast = graph.add_value(
      {graph.unused_value_name(graph.nodes[n].name + "/float_exponent"), DType::kFloat32, shape, std::nullopt, -1});
  ir::Attributes to;
  to.set("to", int64_t{1});  // TensorProto FLOAT
  insert_before(graph, n, OpKind::kCast, {y}, cast, std::move(to));
  graph.nodes[n + 1].inputs[1] = cast;
}

}  // namespace

Status rewrite_typed_forms(ir::Graph& graph, size_t n) {
  if (graph.nodes[n].attrs.has(kLegacyBroadcastAttr)) return resolve_legacy_broadcast(graph, n);
  const ir::Node& node = graph.nodes[n];
  auto dtype = [&](size_t i) { return graph.value(node.inputs[i]).dtype; };
  if (node.op == OpKind::kNeg && is_integer(dtype(0))) {
    rewrite_integer_neg(graph, n);
  } else if (node.op == OpKind::kPow && dtype(0) == DType::kFloat32 && is_integer(dtype(1))) {
    rewrite_integer_exponent(graph, n);
  }
  return Status::ok();
}

}  // namespace ucudnn::onnx_import
