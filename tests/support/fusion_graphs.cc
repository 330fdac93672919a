// The fusion-pass tests' graph builders (fusion_graphs.h): broadcasting elementwise nodes, 1×1 and
// depthwise Convs with biases, a DenseNet-like block, and the FusedPointwise nodes of a graph.
#include "tests/support/fusion_graphs.h"

#include <algorithm>
#include <string>

#include "tests/support/pass_test_helpers.h"

namespace ucudnn::optimizer {

using ucudnn_test::GraphBuilder;
using ucudnn_test::random_tensor;

namespace {

Shape broadcast(const Shape& a, const Shape& b) {
  Shape out(std::max(a.size(), b.size()), 1);
  for (size_t i = 0; i < out.size(); ++i) {
    const int64_t da = i < out.size() - a.size() ? 1 : a[i - (out.size() - a.size())];
    const int64_t db = i < out.size() - b.size() ? 1 : b[i - (out.size() - b.size())];
    out[i] = std::max(da, db);
  }
  return out;
}

}  // namespace

ir::ValueId unary(GraphBuilder& b, OpKind op, ir::ValueId x, ir::Attributes attrs) {
  return b.same_shape(op, {x}, std::move(attrs));
}
ir::ValueId binary(GraphBuilder& b, OpKind op, ir::ValueId x, ir::ValueId y) {
  return b.node(op, {x, y}, {broadcast(b.shape(x), b.shape(y))})[0];
}
ir::ValueId scalar(GraphBuilder& b, float value) {
  return b.constant("c" + std::to_string(b.graph().values.size()), Tensor::from_floats({}, std::vector<float>{value}));
}
ir::Attributes float_attrs(std::initializer_list<std::pair<const char*, float>> values) {
  ir::Attributes attrs;
  for (const auto& [name, value] : values) attrs.set(name, value);
  return attrs;
}

ir::ValueId conv_1x1(GraphBuilder& b, ir::ValueId x, int64_t k, int64_t c, uint32_t seed) {
  const std::string n = std::to_string(seed);
  return b.conv(x, b.constant("w" + n, random_tensor({k, c, 1, 1}, seed)),
                b.constant("b" + n, random_tensor({k}, seed + 1)));
}

ir::ValueId depthwise(GraphBuilder& b, ir::ValueId x) {
  ir::Attributes attrs;
  attrs.set("group", int64_t{6});
  attrs.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  const ir::ValueId w = b.constant("dw", random_tensor({6, 1, 3, 3}, 7));
  return b.node(OpKind::kConv, {x, w, b.constant("db", random_tensor({6}, 8))}, {{2, 6, 7, 7}}, std::move(attrs))[0];
}

ir::Graph dense_block() {
  GraphBuilder b;
  const ir::ValueId x = b.conv(b.input("x", {2, 3, 6, 6}), b.constant("w0", random_tensor({4, 3, 3, 3}, 1)),
                               b.constant("b0", random_tensor({4}, 2)), {.pad = 1});
  const ir::ValueId p = b.conv(x, b.constant("w1", random_tensor({2, 4, 1, 1}, 3)), ir::kNoValue);
  const ir::ValueId q = b.conv(x, b.constant("w2", random_tensor({3, 4, 3, 3}, 4)), ir::kNoValue, {.pad = 1});
  const ir::ValueId r = b.relu(add_batch_norm(b, b.concat({p, q}, 1), random_batch_norm(5, 50)));
  b.output(b.conv(r, b.constant("w3", random_tensor({4, 5, 1, 1}, 5)), ir::kNoValue), "y");
  return b.finish();
}

std::vector<const ir::Node*> fused_nodes(const ir::Graph& graph) {
  std::vector<const ir::Node*> nodes;
  for (const ir::Node& n : graph.nodes)
    if (n.op == OpKind::kFusedPointwise) nodes.push_back(&n);
  return nodes;
}

}  // namespace ucudnn::optimizer
