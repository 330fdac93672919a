// The autodiff driver (training/autodiff.h): seeds, summing a value's several contributions,
// values the loss does not depend on, and the error for an op without a gradient rule.
#include <gtest/gtest.h>

#include "runtime/ops/op_descriptor.h"
#include "tests/support/backend_runner.h"
#include "tests/support/gradient_check.h"
#include "training/autodiff.h"

namespace ucudnn_test {
namespace {

using ucudnn::DType;
using ucudnn::OpKind;
using ucudnn::Shape;
using ucudnn::Tensor;
namespace ir = ucudnn::ir;

ir::ValueId add_value(ir::Graph& g, const std::string& name, Shape shape) {
  ir::Value v;
  v.name = name;
  v.dtype = DType::kFloat32;
  v.shape = std::move(shape);
  return g.add_value(std::move(v));
}

ir::ValueId add_node(ir::Graph& g, OpKind op, std::vector<ir::ValueId> inputs, const std::string& out) {
  ir::Node n;
  n.name = out + "_node";
  n.op = op;
  n.opset = 17;
  n.inputs = std::move(inputs);
  const ir::ValueId id = add_value(g, out, g.value(n.inputs[0]).shape);
  g.value(id).producer = static_cast<ir::NodeId>(g.nodes.size());
  n.outputs = {id};
  g.nodes.push_back(std::move(n));
  return id;
}

ir::ValueId add_constant(ir::Graph& g, const std::string& name, Tensor t) {
  ir::Value v;
  v.name = name;
  v.dtype = t.dtype();
  v.shape = t.shape();
  v.constant = std::move(t);
  return g.add_value(std::move(v));
}

// y = x·x + x (x used three times): dy/dx = 2x + 1, each contribution summed once.
TEST(Autodiff, SumsEveryUseOfAValue) {
  ir::Graph g;
  g.name = "uses";
  const ir::ValueId x = add_value(g, "x", {2, 3});
  g.inputs = {x};
  const ir::ValueId sq = add_node(g, OpKind::kMul, {x, x}, "sq");
  const ir::ValueId y = add_node(g, OpKind::kAdd, {sq, x}, "y");
  const std::vector<float> ones(6, 1.0f);
  const ir::ValueId seed = add_constant(g, "dy", Tensor::from_floats({2, 3}, ones));
  auto grads = ucudnn::training::append_gradients(g, {{y, seed}}, {x});
  ASSERT_TRUE(grads.has_value()) << grads.status().to_string();
  g.outputs = *grads;
  ASSERT_TRUE(g.validate().is_ok()) << g.validate().to_string();

  const std::vector<float> xs = {-2, -1, 0, 0.5f, 1, 3};
  auto out = run_on_backend(*shared_backend(backend_config("cpu")).backend, g, {Tensor::from_floats({2, 3}, xs)});
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  for (size_t i = 0; i < xs.size(); ++i) EXPECT_FLOAT_EQ((*out)[0].data<float>()[i], 2 * xs[i] + 1) << i;
}

// A value the loss does not depend on gets a zero gradient; the nodes that do not lead to the
// loss are not differentiated (an op without a rule there is no error).
TEST(Autodiff, UnusedParameterGetsZeros) {
  ir::Graph g;
  g.name = "unused";
  const ir::ValueId x = add_value(g, "x", {4});
  const ir::ValueId p = add_value(g, "p", {4});
  g.inputs = {x, p};
  add_node(g, OpKind::kLRN, {p}, "side");  // no gradient rule; not on the way to y
  const ir::ValueId y = add_node(g, OpKind::kRelu, {x}, "y");
  const std::vector<float> ones(4, 1.0f);
  const ir::ValueId seed = add_constant(g, "dy", Tensor::from_floats({4}, ones));
  auto grads = ucudnn::training::append_gradients(g, {{y, seed}}, {p});
  ASSERT_TRUE(grads.has_value()) << grads.status().to_string();
  const ir::Value& grad = g.value(grads->front());
  ASSERT_TRUE(grad.constant.has_value());
  EXPECT_EQ(grad.shape, Shape({4}));
  for (int i = 0; i < 4; ++i) EXPECT_EQ(grad.constant->data<float>()[i], 0.0f);
}

TEST(Autodiff, OpWithoutRuleIsUnsupportedNamingTheNode) {
  ir::Graph g;
  g.name = "norule";
  const ir::ValueId x = add_value(g, "x", {1, 4, 3, 3});
  g.inputs = {x};
  const ir::ValueId y = add_node(g, OpKind::kLRN, {x}, "lrn_out");
  g.nodes.back().attrs.set("size", int64_t{3});
  std::vector<float> ones(36, 1.0f);
  const ir::ValueId seed = add_constant(g, "dy", Tensor::from_floats({1, 4, 3, 3}, ones));
  auto grads = ucudnn::training::append_gradients(g, {{y, seed}}, {x});
  ASSERT_FALSE(grads.has_value());
  EXPECT_EQ(grads.status().code(), ucudnn::StatusCode::kUnsupported);
  EXPECT_NE(grads.status().message().find("lrn_out_node"), std::string::npos) << grads.status().to_string();
}

TEST(Autodiff, SeedOfAnotherShapeIsRefused) {
  ir::Graph g;
  const ir::ValueId x = add_value(g, "x", {4});
  g.inputs = {x};
  const ir::ValueId y = add_node(g, OpKind::kRelu, {x}, "y");
  const std::vector<float> ones(3, 1.0f);
  const ir::ValueId seed = add_constant(g, "dy", Tensor::from_floats({3}, ones));
  auto grads = ucudnn::training::append_gradients(g, {{y, seed}}, {x});
  ASSERT_FALSE(grads.has_value());
  EXPECT_EQ(grads.status().code(), ucudnn::StatusCode::kInvalidArgument);
}

// The harness itself on a rule with a closed form: Mul's.
TEST(Autodiff, GradientCheckOfMul) {
  check_gradients({.name = "mul_broadcast", .op = OpKind::kMul, .inputs = {input({2, 3, 4}), input({3, 1})}});
}

}  // namespace
}  // namespace ucudnn_test
