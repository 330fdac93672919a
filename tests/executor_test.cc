// Tests of the CPU executor and the activation memory plan, on hand-built graphs.
#include <gtest/gtest.h>

#include "runtime/executor/cpu_executor.h"

namespace ucudnn::runtime {
namespace {

// x -> Relu -> Relu -> ... (n nodes) -> y
ir::Graph relu_chain(int n, Shape shape) {
  ir::Graph g;
  ir::ValueId prev = g.add_value({"x", DType::kFloat32, shape, std::nullopt, -1});
  g.inputs.push_back(prev);
  for (int i = 0; i < n; ++i) {
    ir::Node node;
    // (Appending instead of "literal" + std::string dodges GCC 12's false -Wrestrict, bug 105329.)
    node.name = std::string("relu").append(std::to_string(i));
    node.op = OpKind::kRelu;
    node.opset = 13;
    node.inputs = {prev};
    prev = g.add_value({std::string("v").append(std::to_string(i)), DType::kFloat32, shape, std::nullopt, i});
    node.outputs = {prev};
    g.nodes.push_back(node);
  }
  g.outputs.push_back(prev);
  return g;
}

TEST(CpuExecutor, RunsReluChainAndReusesMemory) {
  ir::Graph g = relu_chain(6, {2, 3, 4});
  ASSERT_TRUE(g.validate().is_ok());
  auto plan = make_cpu_plan(g);
  ASSERT_TRUE(plan.has_value());
  // Seven 96-byte tensors, at most two alive at once (three while the last is copied out).
  EXPECT_EQ(plan->unplanned_bytes, 7u * 96u);
  EXPECT_LE(plan->arena_bytes, 3u * 128u);

  auto executor = CpuExecutor::create(g, *plan);
  ASSERT_TRUE(executor.has_value()) << executor.status().to_string();
  std::vector<float> values(24);
  for (int i = 0; i < 24; ++i) values[i] = static_cast<float>(i) - 12.0f;
  auto outputs = (*executor)->run({Tensor::from_floats({2, 3, 4}, values)});
  ASSERT_TRUE(outputs.has_value()) << outputs.status().to_string();
  ASSERT_EQ(outputs->size(), 1u);
  for (int i = 0; i < 24; ++i) EXPECT_EQ((*outputs)[0].data<float>()[i], std::max(values[i], 0.0f));
}

TEST(CpuExecutor, RejectsWrongInputShapeAndDtype) {
  ir::Graph g = relu_chain(1, {2, 3});
  auto executor = CpuExecutor::create(g, *make_cpu_plan(g));
  ASSERT_TRUE(executor.has_value());
  std::vector<float> six(6, 1.0f);
  auto wrong_shape = (*executor)->run({Tensor::from_floats({3, 2}, six)});
  ASSERT_FALSE(wrong_shape.has_value());
  EXPECT_EQ(wrong_shape.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(wrong_shape.status().message().find("'x'"), std::string::npos);
  std::vector<int64_t> ints(6, 1);
  auto wrong_dtype = (*executor)->run({Tensor::from_int64s({2, 3}, ints)});
  ASSERT_FALSE(wrong_dtype.has_value());
  auto wrong_count = (*executor)->run({});
  ASSERT_FALSE(wrong_count.has_value());
}

TEST(CpuExecutor, RejectsPlanThatDoesNotMatch) {
  ir::Graph g = relu_chain(2, {4});
  Plan plan = *make_cpu_plan(g);
  plan.steps.pop_back();
  auto executor = CpuExecutor::create(g, plan);
  ASSERT_FALSE(executor.has_value());
  EXPECT_NE(executor.status().message().find("does not match"), std::string::npos);

  Plan divided = *make_cpu_plan(g);
  divided.steps[0].micro_batches = {{2, -1}, {2, -1}};  // Relu cannot be divided
  auto refused = CpuExecutor::create(g, divided);
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.status().message().find("only convolutions"), std::string::npos);
}

}  // namespace
}  // namespace ucudnn::runtime
