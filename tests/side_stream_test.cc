// The side-stream analysis (Note [side stream], runtime/plan/side_stream.h)
// on the tiny ResNet bottleneck block with a downsample branch: which Conv goes
// to the side stream and its window, the activation memory that keeps its
// buffers apart from the steps it may overlap, the placement of its workspace
// slice, the checks that refuse inconsistent plans, the JSON round trip, and
// that the CPU (which runs side steps in order) computes the model's outputs.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "onnx_import/onnx_import.h"
#include "optimizer/passes/passes.h"
#include "optimizer/plan_memory.h"
#include "optimizer/side_streams.h"
#include "runtime/cpu/cpu_backend.h"
#include "runtime/executor/executor.h"
#include "runtime/plan/plan_json.h"
#include "runtime/plan/side_stream.h"
#include "tests/support/backend_runner.h"
#include "tests/test_paths.h"

namespace ucudnn::runtime {
namespace {

Backend& cpu_backend() {
  static const std::unique_ptr<Backend> backend = cpu::make_cpu_backend();
  return *backend;
}

// Every step whole with the default algorithm and the workspace it asks for, activations by liveness.
Expected<Plan> make_cpu_plan(const ir::Graph& graph) { return ucudnn_test::make_plan(cpu_backend(), graph, {}); }

std::string model_dir(const std::string& name) { return ucudnn_test::source_dir() + "/models/tiny/" + name; }

// The model after the inference passes, as every session runs it.
ir::Graph load(const std::string& name) {
  onnx_import::ImportOptions options;
  options.batch = 2;
  auto graph = onnx_import::load_model(model_dir(name) + "/model.onnx", options);
  EXPECT_TRUE(graph.has_value()) << graph.status().to_string();
  EXPECT_TRUE(optimizer::run_inference_passes(*graph).has_value());
  return std::move(*graph);
}

ir::NodeId find_node(const ir::Graph& graph, const std::string& name) {
  for (size_t n = 0; n < graph.nodes.size(); ++n)
    if (graph.nodes[n].name == name) return static_cast<ir::NodeId>(n);
  ADD_FAILURE() << "no node '" << name << "'";
  return -1;
}

ir::ValueId find_value(const ir::Graph& graph, const std::string& name) {
  const ir::ValueId id = graph.find_value(name);
  EXPECT_NE(id, ir::kNoValue) << "no value '" << name << "'";
  return id;
}

bool share_bytes(const Plan& plan, const ir::Graph& graph, ir::ValueId a, ir::ValueId b) {
  auto bytes = [&](ir::ValueId id) { return shape_numel(graph.value(id).shape) * dtype_size(graph.value(id).dtype); };
  const int64_t a0 = plan.value_offsets[a], b0 = plan.value_offsets[b];
  return a0 < b0 + static_cast<int64_t>(bytes(b)) && b0 < a0 + static_cast<int64_t>(bytes(a));
}

// After fuse_conv_add the block is conv1, conv2, downsample, conv3(+z): the
// downsample reads only the block's input, so it may overlap conv1 and conv2.
TEST(SideStream, TheDownsampleGoesBesideTheMainBranch) {
  const ir::Graph graph = load("tiny_downsample");
  const ir::NodeId downsample = find_node(graph, "downsample");
  EXPECT_EQ(optimizer::side_stream_candidates(graph), std::vector<ir::NodeId>{downsample});
  const SideWindow window = side_window(graph, downsample);
  EXPECT_EQ(window.fork, -1);  // it reads the graph input only
  ASSERT_GE(window.join, 0);
  ASSERT_LT(window.join, static_cast<int32_t>(graph.nodes.size()));
  EXPECT_EQ(graph.nodes[window.join].name, "conv3");  // the Conv that took the Add's z
  // conv1 and conv2 lie in the window.
  EXPECT_LT(window.fork, find_node(graph, "conv1"));
  EXPECT_GT(window.join, find_node(graph, "conv2"));
}

TEST(SideStream, NoCandidatesWithoutIndependentConvolutions) {
  EXPECT_TRUE(optimizer::side_stream_candidates(load("tiny_residual")).empty());  // identity skip: one chain of convs
  EXPECT_TRUE(optimizer::side_stream_candidates(load("tiny_cnn")).empty());
  // Two branches from the input: exactly one of the two goes to the side.
  EXPECT_EQ(optimizer::side_stream_candidates(load("tiny_branches")).size(), 1u);
}

// Serially the downsample's output may reuse conv1's bytes (conv1's output is
// dead by then); on the side stream the downsample may run while conv2 still
// reads them, so the planner must keep them apart.
TEST(SideStream, ItsBuffersStayApartFromTheStepsItMayOverlap) {
  const ir::Graph graph = load("tiny_downsample");
  const ir::ValueId conv1_out = graph.nodes[find_node(graph, "conv1")].outputs[0];
  const ir::ValueId z = graph.nodes[find_node(graph, "downsample")].outputs[0];
  const ir::ValueId input = find_value(graph, "input");

  auto serial = make_cpu_plan(graph);
  ASSERT_TRUE(serial.has_value()) << serial.status().to_string();
  ASSERT_TRUE(share_bytes(*serial, graph, conv1_out, z)) << "precondition: serially the two share bytes";

  Plan side = *serial;
  side.steps[find_node(graph, "downsample")].stream = kSideStream;
  optimizer::plan_activation_memory(graph, &side);
  EXPECT_FALSE(share_bytes(side, graph, conv1_out, z));
  for (ir::ValueId id : {conv1_out, graph.nodes[find_node(graph, "conv2")].outputs[0]}) {
    EXPECT_FALSE(share_bytes(side, graph, id, z)) << graph.value(id).name;
    EXPECT_FALSE(share_bytes(side, graph, id, input)) << graph.value(id).name;
  }
  EXPECT_GE(side.arena_bytes, serial->arena_bytes);
}

TEST(SideStream, SlicesAreMovedBesideTheWindowOrTheStepStaysSerial) {
  const ir::Graph graph = load("tiny_downsample");
  const ir::NodeId downsample = find_node(graph, "downsample");
  const ir::NodeId conv2 = find_node(graph, "conv2");
  auto base = make_cpu_plan(graph);
  ASSERT_TRUE(base.has_value());
  for (PlanStep& step : base->steps) step.workspace_offset = step.workspace_bytes = 0;
  base->steps[conv2].workspace_bytes = 1000;
  base->steps[downsample].workspace_bytes = 500;  // at offset 0: overlaps conv2's slice
  base->workspace_pool_bytes = 1000;

  Plan roomy = *base;
  EXPECT_EQ(optimizer::assign_side_streams(graph, {downsample}, SIZE_MAX, &roomy), 1);
  EXPECT_EQ(roomy.steps[downsample].stream, kSideStream);
  EXPECT_EQ(roomy.steps[downsample].workspace_offset, 1024u);  // above conv2's slice, 256-aligned
  EXPECT_EQ(roomy.workspace_pool_bytes, 1524u);
  EXPECT_TRUE(check_side_streams(graph, roomy).is_ok());

  Plan tight = *base;  // a 1200-byte pool cannot hold both slices: the downsample stays serial
  EXPECT_EQ(optimizer::assign_side_streams(graph, {downsample}, 1200, &tight), 0);
  EXPECT_EQ(tight.steps[downsample].stream, kMainStream);
  EXPECT_EQ(tight.steps[downsample].workspace_offset, 0u);
  EXPECT_EQ(tight.workspace_pool_bytes, 1000u);

  Plan disjoint = *base;  // already apart: kept where it is
  disjoint.steps[downsample].workspace_offset = 1000;
  disjoint.workspace_pool_bytes = 1500;
  EXPECT_EQ(optimizer::assign_side_streams(graph, {downsample}, 1500, &disjoint), 1);
  EXPECT_EQ(disjoint.steps[downsample].workspace_offset, 1000u);
}

TEST(SideStream, InconsistentPlansAreRefused) {
  const ir::Graph graph = load("tiny_downsample");
  auto base = make_cpu_plan(graph);
  ASSERT_TRUE(base.has_value());
  const ir::NodeId downsample = find_node(graph, "downsample");
  auto refusal = [&](const Plan& plan) { return check_side_streams(graph, plan).to_string(); };

  Plan bad_stream = *base;
  bad_stream.steps[0].stream = 2;
  EXPECT_NE(refusal(bad_stream).find("streams are 0 (main) and 1 (side)"), std::string::npos) << refusal(bad_stream);

  const ir::Graph cnn = load("tiny_cnn");  // ends with a Gemm
  auto not_conv = make_cpu_plan(cnn);
  ASSERT_TRUE(not_conv.has_value());
  not_conv->steps.back().stream = kSideStream;
  const std::string not_conv_refusal = check_side_streams(cnn, *not_conv).to_string();
  EXPECT_NE(not_conv_refusal.find("only convolutions"), std::string::npos) << not_conv_refusal;

  Plan chained = *base;  // conv1 feeds conv2: both on the side would need events between side steps
  chained.steps[find_node(graph, "conv1")].stream = kSideStream;
  chained.steps[find_node(graph, "conv2")].stream = kSideStream;
  EXPECT_NE(refusal(chained).find("another side-stream step"), std::string::npos) << refusal(chained);

  Plan overlapping = *base;
  for (PlanStep& step : overlapping.steps) step.workspace_offset = step.workspace_bytes = 0;
  overlapping.steps[downsample].stream = kSideStream;
  overlapping.steps[downsample].workspace_offset = 0;
  overlapping.steps[downsample].workspace_bytes = 64;
  overlapping.steps[find_node(graph, "conv2")].workspace_offset = 32;
  overlapping.steps[find_node(graph, "conv2")].workspace_bytes = 64;
  overlapping.workspace_pool_bytes = 96;
  EXPECT_NE(refusal(overlapping).find("overlaps that of node 'conv2'"), std::string::npos) << refusal(overlapping);

  // The executor refuses it too, before allocating anything (its arena laid out for the side step).
  optimizer::plan_activation_memory(graph, &overlapping);
  auto executor = Executor::create(cpu_backend(), graph, overlapping);
  ASSERT_FALSE(executor.has_value());
  EXPECT_NE(executor.status().to_string().find("workspace slice overlaps"), std::string::npos);
}

TEST(SideStream, PlanJsonKeepsTheStream) {
  const ir::Graph graph = load("tiny_downsample");
  auto plan = make_cpu_plan(graph);
  ASSERT_TRUE(plan.has_value());
  plan->steps[find_node(graph, "downsample")].stream = kSideStream;
  auto back = plan_from_json(plan_to_json(*plan, graph));
  ASSERT_TRUE(back.has_value()) << back.status().to_string();
  for (size_t s = 0; s < plan->steps.size(); ++s) EXPECT_EQ(back->steps[s].stream, plan->steps[s].stream) << s;
}

// The CPU runs side steps in order; with the side-stream memory layout the
// block still computes its expected output (test_data_set_0).
TEST(SideStream, CpuRunsAPlanWithASideStepCorrectly) {
  const ir::Graph graph = load("tiny_downsample");
  auto plan = make_cpu_plan(graph);
  ASSERT_TRUE(plan.has_value());
  ASSERT_EQ(optimizer::assign_side_streams(graph, optimizer::side_stream_candidates(graph), SIZE_MAX, &*plan), 1);  // apart from conv1's im2col
  optimizer::plan_activation_memory(graph, &*plan);
  auto executor = Executor::create(cpu_backend(), graph, *plan);
  ASSERT_TRUE(executor.has_value()) << executor.status().to_string();
  auto input = onnx_import::read_tensor_file(model_dir("tiny_downsample") + "/test_data_set_0/input_0.pb");
  auto expected = onnx_import::read_tensor_file(model_dir("tiny_downsample") + "/test_data_set_0/output_0.pb");
  ASSERT_TRUE(input.has_value() && expected.has_value());
  auto outputs = (*executor)->run({*input});
  ASSERT_TRUE(outputs.has_value()) << outputs.status().to_string();
  ASSERT_EQ((*outputs)[0].shape(), expected->shape());
  for (int64_t i = 0; i < expected->numel(); ++i)
    EXPECT_NEAR((*outputs)[0].data<float>()[i], expected->data<float>()[i], 1e-4f) << i;
}

}  // namespace
}  // namespace ucudnn::runtime
