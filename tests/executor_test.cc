// Tests of runtime::Executor over the CPU backend and of the activation
// memory plan, on hand-built graphs with plans built by hand
// (tests/support/backend_runner.h): running, reusing arena memory, refusing
// bad inputs and plans that do not match, and profiling.
#include <gtest/gtest.h>

#include <algorithm>

#include "optimizer/plan_memory.h"
#include "runtime/cpu/cpu_backend.h"
#include "runtime/executor/executor.h"
#include "tests/support/backend_runner.h"

namespace ucudnn::runtime {
namespace {

using ucudnn_test::make_plan;
using ucudnn_test::undivided_plan;

// x -> Relu -> Relu -> ... (n nodes) -> y
ir::Graph relu_chain(int n, Shape shape) {
  ir::Graph g;
  g.name = "relu_chain";
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

class CpuExecutorTest : public ::testing::Test {
 protected:
  std::unique_ptr<Backend> backend_ = cpu::make_cpu_backend();
};

// A one-Conv graph: x [n, c, h, w] (a runtime input) convolved with a constant w of `weight` everywhere.
ir::Graph one_conv_graph(const std::string& name, Shape x_shape, Shape w_shape, Shape y_shape, float weight) {
  ir::Graph g;
  g.name = name;
  const ir::ValueId x = g.add_value({"x", DType::kFloat32, x_shape, std::nullopt, -1});
  const ir::ValueId w = g.add_value({"w", DType::kFloat32, w_shape,
                                     Tensor::from_floats(w_shape, std::vector<float>(shape_numel(w_shape), weight)), -1});
  const ir::ValueId y = g.add_value({"y", DType::kFloat32, y_shape, std::nullopt, 0});
  g.inputs = {x};
  g.outputs = {y};
  ir::Node conv;
  conv.name = "conv";
  conv.op = OpKind::kConv;
  conv.opset = 17;
  conv.inputs = {x, w};
  conv.outputs = {y};
  conv.attrs.set("group", int64_t{1});
  conv.attrs.set("auto_pad", std::string("NOTSET"));
  g.nodes.push_back(conv);
  return g;
}

TEST_F(CpuExecutorTest, RunsReluChainAndReusesMemory) {
  ir::Graph g = relu_chain(6, {2, 3, 4});
  ASSERT_TRUE(g.validate().is_ok());
  auto plan = make_plan(*backend_, g);
  ASSERT_TRUE(plan.has_value()) << plan.status().to_string();
  // Seven 96-byte tensors, at most two alive at once (three while the last is copied out).
  EXPECT_EQ(plan->unplanned_bytes, 7u * 96u);
  EXPECT_LE(plan->arena_bytes, 3u * 256u);
  EXPECT_EQ(plan->workspace_pool_bytes, 0u);  // Relu needs none

  auto executor = Executor::create(*backend_, g, *plan);
  ASSERT_TRUE(executor.has_value()) << executor.status().to_string();
  EXPECT_EQ((*executor)->allocated_bytes(), plan->arena_bytes);  // constants stay in place on the host
  std::vector<float> values(24);
  for (int i = 0; i < 24; ++i) values[i] = static_cast<float>(i) - 12.0f;
  for (int repeat = 0; repeat < 2; ++repeat) {
    auto outputs = (*executor)->run({Tensor::from_floats({2, 3, 4}, values)});
    ASSERT_TRUE(outputs.has_value()) << outputs.status().to_string();
    ASSERT_EQ(outputs->size(), 1u);
    for (int i = 0; i < 24; ++i) EXPECT_EQ((*outputs)[0].data<float>()[i], std::max(values[i], 0.0f)) << i;
  }
}

// Inputs and outputs of several MiB are copied in and out by the session's threads, chunk by chunk
// (cpu_backend.cc, threaded_copy): every element arrives, the last partial chunk too.
TEST_F(CpuExecutorTest, CopiesLargeInputsAndOutputsWhole) {
  const Shape shape = {3, 1000, 1000};  // 12 MB: eleven full chunks of 1 MiB and a partial one
  ir::Graph g = relu_chain(1, shape);
  auto plan = make_plan(*backend_, g);
  ASSERT_TRUE(plan.has_value()) << plan.status().to_string();
  auto executor = Executor::create(*backend_, g, *plan);
  ASSERT_TRUE(executor.has_value()) << executor.status().to_string();
  std::vector<float> values(static_cast<size_t>(shape_numel(shape)));
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 1009) - 500.0f;
  auto outputs = (*executor)->run({Tensor::from_floats(shape, values)});
  ASSERT_TRUE(outputs.has_value()) << outputs.status().to_string();
  const float* y = (*outputs)[0].data<float>();
  size_t wrong = 0;
  for (size_t i = 0; i < values.size(); ++i) wrong += y[i] != std::max(values[i], 0.0f);
  EXPECT_EQ(wrong, 0u);
}

TEST_F(CpuExecutorTest, RejectsWrongInputShapeAndDtype) {
  ir::Graph g = relu_chain(1, {2, 3});
  auto executor = Executor::create(*backend_, g, undivided_plan(*backend_, g));
  ASSERT_TRUE(executor.has_value()) << executor.status().to_string();
  std::vector<float> six(6, 1.0f);
  auto wrong_shape = (*executor)->run({Tensor::from_floats({3, 2}, six)});
  ASSERT_FALSE(wrong_shape.has_value());
  EXPECT_EQ(wrong_shape.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(wrong_shape.status().message().find("'x'"), std::string::npos) << wrong_shape.status().message();
  std::vector<int64_t> ints(6, 1);
  auto wrong_dtype = (*executor)->run({Tensor::from_int64s({2, 3}, ints)});
  ASSERT_FALSE(wrong_dtype.has_value());
  EXPECT_EQ(wrong_dtype.status().code(), StatusCode::kInvalidArgument);
  auto wrong_count = (*executor)->run({});
  ASSERT_FALSE(wrong_count.has_value());
  EXPECT_EQ(wrong_count.status().code(), StatusCode::kInvalidArgument);
}

TEST_F(CpuExecutorTest, RejectsPlanThatDoesNotMatch) {
  ir::Graph g = relu_chain(2, {4});
  Plan plan = undivided_plan(*backend_, g);
  plan.steps.pop_back();
  auto executor = Executor::create(*backend_, g, plan);
  ASSERT_FALSE(executor.has_value());
  EXPECT_NE(executor.status().message().find("does not match"), std::string::npos) << executor.status().message();

  Plan divided = undivided_plan(*backend_, g);
  divided.steps[0].micro_batches = {{2, -1}, {2, -1}};  // Relu cannot be divided
  auto refused = Executor::create(*backend_, g, divided);
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.status().message().find("only convolutions"), std::string::npos) << refused.status().message();

  Plan for_gpu = undivided_plan(*backend_, g);
  for_gpu.device = "cuda";
  auto wrong_device = Executor::create(*backend_, g, for_gpu);
  ASSERT_FALSE(wrong_device.has_value());
  EXPECT_EQ(wrong_device.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(wrong_device.status().message().find("made for device 'cuda'"), std::string::npos)
      << wrong_device.status().message();

  Plan outside = undivided_plan(*backend_, g);
  outside.value_offsets[g.outputs[0]] = static_cast<int64_t>(outside.arena_bytes);  // past the arena's end
  auto outside_arena = Executor::create(*backend_, g, outside);
  ASSERT_FALSE(outside_arena.has_value());
  EXPECT_NE(outside_arena.status().message().find("outside the arena"), std::string::npos)
      << outside_arena.status().message();
}

// A convolution whose algorithm needs workspace, given a plan with none: refused at creation, naming the node.
TEST_F(CpuExecutorTest, RejectsAWorkspaceSliceTooSmallForTheAlgorithm) {
  ir::Graph g = one_conv_graph("one_conv", {2, 3, 6, 6}, {4, 3, 3, 3}, {2, 4, 4, 4}, 0.5f);
  ASSERT_TRUE(g.validate().is_ok());

  Plan plan = undivided_plan(*backend_, g);
  plan.steps[0].micro_batches = {{2, 0}};  // im2col_gemm: needs an im2col buffer
  auto executor = Executor::create(*backend_, g, plan);
  ASSERT_FALSE(executor.has_value());
  EXPECT_EQ(executor.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(executor.status().message().find("node 'conv'"), std::string::npos) << executor.status().message();
  EXPECT_NE(executor.status().message().find("of workspace"), std::string::npos) << executor.status().message();

  ucudnn_test::RunOptions options;
  options.conv_algorithm = 0;
  auto sized = make_plan(*backend_, g, options);  // the same algorithm with its workspace
  ASSERT_TRUE(sized.has_value()) << sized.status().to_string();
  EXPECT_GT(sized->steps[0].workspace_bytes, 0u);
  auto runs = Executor::create(*backend_, g, *sized);
  ASSERT_TRUE(runs.has_value()) << runs.status().to_string();
  auto outputs = (*runs)->run({Tensor::from_floats({2, 3, 6, 6}, std::vector<float>(216, 1.0f))});
  ASSERT_TRUE(outputs.has_value()) << outputs.status().to_string();
  EXPECT_FLOAT_EQ((*outputs)[0].data<float>()[0], 27 * 0.5f);  // 3·3·3 products of 1 · 0.5
}

// Note [host runs in place]: the steps read the caller's input tensor where it lies and leave it as it
// was; each run reads its own tensor (the calls are pointed again); a graph input that is also an
// output comes back as a copy.
TEST_F(CpuExecutorTest, RunReadsHostInputsInPlace) {
  ir::Graph g = relu_chain(2, {2, 3});
  g.outputs.insert(g.outputs.begin(), g.inputs[0]);  // x itself is output 0
  auto executor = Executor::create(*backend_, g, undivided_plan(*backend_, g));
  ASSERT_TRUE(executor.has_value()) << executor.status().to_string();
  for (float sign : {-1.0f, 1.0f}) {
    std::vector<float> values = {1, -2, 3, -4, 5, -6};
    for (float& v : values) v *= sign;
    const Tensor x = Tensor::from_floats({2, 3}, values);
    auto outputs = (*executor)->run({x});
    ASSERT_TRUE(outputs.has_value()) << outputs.status().to_string();
    ASSERT_EQ(outputs->size(), 2u);
    EXPECT_NE((*outputs)[0].raw(), x.raw());
    for (size_t i = 0; i < values.size(); ++i) {
      EXPECT_EQ(x.data<float>()[i], values[i]) << "the input was written at " << i;
      EXPECT_EQ((*outputs)[0].data<float>()[i], values[i]) << "sign " << sign;
      EXPECT_EQ((*outputs)[1].data<float>()[i], std::max(values[i], 0.0f)) << "sign " << sign;
    }
  }
}

TEST_F(CpuExecutorTest, ProfileTimesEveryStepAndTheCopies) {
  ir::Graph g = relu_chain(3, {2, 3});
  auto executor = Executor::create(*backend_, g, undivided_plan(*backend_, g));
  ASSERT_TRUE(executor.has_value()) << executor.status().to_string();
  std::vector<float> six(6, -1.0f);
  auto timings = (*executor)->profile({Tensor::from_floats({2, 3}, six)});
  ASSERT_TRUE(timings.has_value()) << timings.status().to_string();
  ASSERT_EQ(timings->size(), 3u + 2u);  // one per step, plus the input and output copies

  const StepTiming& in = timings->front();
  EXPECT_EQ(in.node, -1);
  EXPECT_EQ(in.name, kCopyInputsName);
  EXPECT_STREQ(step_op_name(in), "copy");
  EXPECT_EQ(in.calls, 0);  // Note [host runs in place]: the CPU copies no input
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

// Device buffers are the GPU's: on the CPU run_bound is refused, naming the buffer.
// An io_bound plan (Plan::io_bound, the Trainer's) keeps the graph's inputs and outputs out of the
// arena: a micro-batched Conv over a graph input must still read each micro-batch's own samples
// from the caller's buffer, and `run` is refused.
TEST_F(CpuExecutorTest, IoBoundPlanSlicesTheCallersInputPerMicroBatch) {
  ir::Graph g = one_conv_graph("io_bound_conv", {4, 1, 3, 3}, {1, 1, 3, 3}, {4, 1, 1, 1}, 1.0f);
  ASSERT_TRUE(g.validate().is_ok());

  ucudnn_test::RunOptions options;
  options.micro_batches = {{1, -1}, {3, -1}};
  auto plan = make_plan(*backend_, g, options);
  ASSERT_TRUE(plan.has_value()) << plan.status().to_string();
  plan->io_bound = true;
  optimizer::plan_activation_memory(g, &*plan);
  EXPECT_EQ(plan->arena_bytes, 0u);
  auto executor = Executor::create(*backend_, g, *plan);
  ASSERT_TRUE(executor.has_value()) << executor.status().to_string();
  std::vector<float> in(36);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i / 9 + 1);  // sample s holds s + 1
  float out[4] = {};
  const Status status = (*executor)->run_bound({in.data()}, {out});
  ASSERT_TRUE(status.is_ok()) << status.to_string();
  for (int s = 0; s < 4; ++s) EXPECT_FLOAT_EQ(out[s], 9.0f * (s + 1)) << "sample " << s;
  auto run = (*executor)->run({Tensor::from_floats({4, 1, 3, 3}, in)});
  ASSERT_FALSE(run.has_value());
  EXPECT_NE(run.status().message().find("io_bound"), std::string::npos) << run.status().message();
}

// On the CPU, device memory is host memory: run_bound reads and writes the caller's buffers (the
// Trainer binds its parameters and gradients this way); a null buffer is still refused.
TEST_F(CpuExecutorTest, RunBoundUsesTheCallersHostBuffers) {
  ir::Graph g = relu_chain(1, {2, 3});
  auto executor = Executor::create(*backend_, g, undivided_plan(*backend_, g));
  ASSERT_TRUE(executor.has_value()) << executor.status().to_string();
  float in[6] = {-1, 2, -3, 4, -5, 6}, out[6] = {};
  const Status status = (*executor)->run_bound({in}, {out});
  ASSERT_TRUE(status.is_ok()) << status.to_string();
  for (int i = 0; i < 6; ++i) EXPECT_EQ(out[i], in[i] > 0 ? in[i] : 0.0f) << i;
  const Status null_input = (*executor)->run_bound({nullptr}, {out});
  EXPECT_EQ(null_input.code(), StatusCode::kInvalidArgument) << null_input.to_string();
  EXPECT_NE(null_input.message().find("input 'x'"), std::string::npos) << null_input.message();
}

}  // namespace
}  // namespace ucudnn::runtime
