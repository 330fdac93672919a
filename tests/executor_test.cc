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

TEST(CpuExecutor, ProfileTimesEveryStepAndTheCopies) {
  ir::Graph g = relu_chain(3, {2, 3});
  auto executor = CpuExecutor::create(g, *make_cpu_plan(g));
  ASSERT_TRUE(executor.has_value()) << executor.status().to_string();
  std::vector<float> six(6, -1.0f);
  auto timings = (*executor)->profile({Tensor::from_floats({2, 3}, six)});
  ASSERT_TRUE(timings.has_value()) << timings.status().to_string();
  ASSERT_EQ(timings->size(), 3u + 2u);  // one per step, plus the input and output copies

  const StepTiming& in = timings->front();
  EXPECT_EQ(in.node, -1);
  EXPECT_EQ(in.name, kCopyInputsName);
  EXPECT_STREQ(step_op_name(in), "copy");
  EXPECT_EQ(in.calls, 1);
  const StepTiming& out = timings->back();
  EXPECT_EQ(out.node, -1);
  EXPECT_EQ(out.name, kCopyOutputsName);
  EXPECT_EQ(out.calls, 1);
  for (int i = 0; i < 3; ++i) {
    const StepTiming& t = (*timings)[static_cast<size_t>(i) + 1];
    EXPECT_EQ(t.node, i);
    EXPECT_EQ(t.name, "relu" + std::to_string(i));
    EXPECT_EQ(t.op, OpKind::kRelu);
    EXPECT_STREQ(step_op_name(t), "Relu");
    EXPECT_EQ(t.calls, 1);
  }
  for (const StepTiming& t : *timings) EXPECT_GE(t.ms, 0.0) << t.name;

  // The run it times is a real one: bad inputs are refused the same way.
  auto refused = (*executor)->profile({});
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  // And the executor still runs correctly afterwards.
  auto outputs = (*executor)->run({Tensor::from_floats({2, 3}, six)});
  ASSERT_TRUE(outputs.has_value());
  EXPECT_EQ((*outputs)[0].data<float>()[0], 0.0f);
}

}  // namespace
}  // namespace ucudnn::runtime
