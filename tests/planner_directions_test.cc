// Tests of the optimizer on the three convolution directions of a training graph: a small graph
// written by hand (two Convs, then the backward ConvGradData and ConvGradFilter calls their
// gradient rule emits) whose kernels are collected with their directions and shared geometry;
// keys and algorithm counts per direction, stored in and read back from the benchmark database;
// undivided / wr / wd plans from hand-written timings (wd's one budget divided across all
// directions, checked against an exhaustive search over the Pareto fronts); the report's
// direction column; and on the CPU, the backward kernels timed by the CPU benchmarker, and
// micro-batched ConvGradData / ConvGradFilter steps computing what undivided ones do — in the
// hand-written graph and in tiny_cnn's training graph (training/training_graph.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <random>

#include "onnx_import/onnx_import.h"
#include "optimizer/bench/benchmark_db.h"
#include "optimizer/bench/benchmarker.h"
#include "optimizer/conv_kernels.h"
#include "optimizer/dp.h"
#include "optimizer/plan_model.h"
#include "optimizer/planner.h"
#include "optimizer/report.h"
#include "runtime/cpu/conv_grad.h"
#include "runtime/cpu/cpu_backend.h"
#include "runtime/cpu/cpu_kernel.h"
#include "runtime/cpu/onednn_conv.h"
#include "runtime/executor/executor.h"
#include "runtime/plan/side_stream.h"
#include "runtime/ir/fusion.h"
#include "tests/support/graph_builder.h"
#include "tests/support/temp_dir.h"
#include "tests/test_paths.h"
#include "training/training_graph.h"

namespace ucudnn::optimizer {
namespace {

using ucudnn_test::GraphBuilder;

// Conv's attributes as a training graph carries them (explicit pads, every attribute present).
ir::Attributes conv_attrs(int64_t kernel, int64_t stride, int64_t pad) {
  ir::Attributes attrs;
  attrs.set("auto_pad", std::string("NOTSET"));
  attrs.set("dilations", std::vector<int64_t>{1, 1});
  attrs.set("group", int64_t{1});
  attrs.set("kernel_shape", std::vector<int64_t>{kernel, kernel});
  attrs.set("pads", std::vector<int64_t>{pad, pad, pad, pad});
  attrs.set("strides", std::vector<int64_t>{stride, stride});
  return attrs;
}

// The graph's nodes, in order.
enum Node : ir::NodeId { kConv1, kConv2, kConv2GradData, kConv2GradFilter, kConv1GradFilter, kNodeCount };

// A training graph's convolutions, shapes set by hand (no shape inference):
//   y1 = Conv1(x [8,3,8,8], w1 [4,3,3,3], pad 1)            → [8,4,8,8]
//   y2 = Conv2(y1, w2 [6,4,3,3], stride 2, pad 1)           → [8,6,4,4]
//   dy1 = ConvGradData(dy2 [8,6,4,4], w2)                   → [8,4,8,8]
//   dw2 = ConvGradFilter(y1, dy2)                           → [6,4,3,3]
//   dw1 = ConvGradFilter(x, dy1)                            → [4,3,3,3]
// Inputs x, dy2 (the loss gradient arriving at y2); outputs y2, dy1, dw2, dw1.
ir::Graph training_graph() {
  GraphBuilder b;
  const ir::ValueId x = b.input("x", {8, 3, 8, 8});
  const ir::ValueId dy2 = b.input("dy2", {8, 6, 4, 4});
  const ir::ValueId w1 = b.constant("w1", ucudnn_test::random_tensor({4, 3, 3, 3}, 1));
  const ir::ValueId w2 = b.constant("w2", ucudnn_test::random_tensor({6, 4, 3, 3}, 2));
  const ir::Attributes conv1 = conv_attrs(3, 1, 1), conv2 = conv_attrs(3, 2, 1);
  const ir::ValueId y1 = b.node(OpKind::kConv, {x, w1}, {{8, 4, 8, 8}}, conv1)[0];
  const ir::ValueId y2 = b.node(OpKind::kConv, {y1, w2}, {{8, 6, 4, 4}}, conv2)[0];
  ir::Attributes data = conv2;
  data.set("input_shape", std::vector<int64_t>{8, 4, 8, 8});
  const ir::ValueId dy1 = b.node(OpKind::kConvGradData, {dy2, w2}, {{8, 4, 8, 8}}, data)[0];
  ir::Attributes filter2 = conv2;
  filter2.set("filter_shape", std::vector<int64_t>{6, 4, 3, 3});
  const ir::ValueId dw2 = b.node(OpKind::kConvGradFilter, {y1, dy2}, {{6, 4, 3, 3}}, filter2)[0];
  ir::Attributes filter1 = conv1;
  filter1.set("filter_shape", std::vector<int64_t>{4, 3, 3, 3});
  const ir::ValueId dw1 = b.node(OpKind::kConvGradFilter, {x, dy1}, {{4, 3, 3, 3}}, filter1)[0];
  b.output(y2, "y2");
  b.output(dy1, "dy1");
  b.output(dw2, "dw2");
  b.output(dw1, "dw1");
  return b.finish();
}

ConvKernelKey test_device() {
  ConvKernelKey device;
  device.device_name = "hand-written";
  return device;
}

// Per kernel (in collect order) and micro-batch size b in 1, 2, 4, 8: algorithm 0 takes
// per_sample·b + 0.0625 ms with bytes_per_sample·b bytes; algorithm 1 takes 4·per_sample·b ms
// with none. Binary fractions and multiples of the slice alignment keep every sum exact.
struct Line {
  double per_sample;
  size_t bytes_per_sample;
};
constexpr Line kLines[kNodeCount] = {{0.125, 1024}, {0.25, 2048}, {0.25, 4096}, {0.5, 4096}, {0.125, 2048}};

GraphTimings hand_written_timings(const ir::Graph& graph) {
  auto kernels = collect_conv_kernels(graph, test_device());
  EXPECT_TRUE(kernels.has_value()) << kernels.status().to_string();
  GraphTimings timings;
  timings.device_name = "hand-written";
  timings.kernels = *kernels;
  for (size_t k = 0; k < timings.kernels.size(); ++k) {
    KernelTimings t;
    for (int64_t b : {1, 2, 4, 8}) {
      const double n = static_cast<double>(b);
      t.by_batch[b] = {{0, "fast", kLines[k].per_sample * n + 0.0625, kLines[k].bytes_per_sample * b, true},
                       {1, "slow", 4 * kLines[k].per_sample * n, 0, true}};
    }
    timings.timings.push_back({graph.nodes[timings.kernels[k].nodes.front()].name, t, 1});
  }
  return timings;
}

Expected<PlanResult> plan_by_hand(const ir::Graph& graph, Policy policy, size_t workspace_bytes,
                                  double division_threshold = kDefaultDivisionThreshold) {
  PlannerOptions options;
  options.policy = policy;
  options.workspace_bytes = workspace_bytes;
  options.division_threshold = division_threshold;
  return plan_from_timings(graph, "cpu", options, hand_written_timings(graph));
}

// --- Kernels and keys ------------------------------------------------------------------------

TEST(PlannerDirections, EveryConvolutionIsAKernelWithItsDirection) {
  const ir::Graph graph = training_graph();
  auto kernels = collect_conv_kernels(graph, test_device());
  ASSERT_TRUE(kernels.has_value()) << kernels.status().to_string();
  ASSERT_EQ(kernels->size(), 5u) << "the two bwd_filter kernels have different geometry: nothing merges";
  const ConvDirection expected[kNodeCount] = {ConvDirection::kForward, ConvDirection::kForward,
                                              ConvDirection::kBackwardData, ConvDirection::kBackwardFilter,
                                              ConvDirection::kBackwardFilter};
  for (int k = 0; k < kNodeCount; ++k) {
    const ConvKernel& kernel = (*kernels)[k];
    EXPECT_EQ(kernel.nodes, std::vector<ir::NodeId>{k});
    EXPECT_EQ(kernel.direction(), expected[k]) << k;
    EXPECT_EQ(kernel.key.direction, expected[k]) << k;
    EXPECT_EQ(kernel.batch(), 8);
    // Every key written is one the database reads back.
    const std::optional<ConvKernelKey> parsed = parse_kernel_key(kernel.key.to_string());
    ASSERT_TRUE(parsed.has_value()) << kernel.key.to_string();
    EXPECT_EQ(parsed->to_string(), kernel.key.to_string());
    EXPECT_EQ(parsed->direction, expected[k]);
  }
  // The forward geometry in every direction: the layer's three calls differ only in `dir`.
  const ConvKernel& conv2 = (*kernels)[kConv2];
  EXPECT_EQ(conv2.x_shape, (Shape{8, 4, 8, 8}));
  EXPECT_EQ(conv2.w_shape, (Shape{6, 4, 3, 3}));
  EXPECT_EQ(conv2.y_shape, (Shape{8, 6, 4, 4}));
  for (Node backward : {kConv2GradData, kConv2GradFilter}) {
    const ConvKernel& kernel = (*kernels)[backward];
    EXPECT_EQ(kernel.x_shape, conv2.x_shape);
    EXPECT_EQ(kernel.w_shape, conv2.w_shape);
    EXPECT_EQ(kernel.y_shape, conv2.y_shape);
    ConvKernelKey as_forward = kernel.key;
    as_forward.direction = ConvDirection::kForward;
    EXPECT_EQ(as_forward, conv2.key);
  }
  ConvKernelKey conv1_filter = (*kernels)[kConv1GradFilter].key;
  conv1_filter.direction = ConvDirection::kForward;
  EXPECT_EQ(conv1_filter, (*kernels)[kConv1].key);
  const ConvKernelKey& data = (*kernels)[kConv2GradData].key;
  EXPECT_EQ(data.to_string(),
            "dev=hand-written;sm=0;cuda=0;cudnn=0;drv=0;dtype=float32;math=default;layout=nchw;n=8;c=4;h=8;w=8;"
            "k=6;r=3;s=3;pad=1,1;stride=2,2;dil=1,1;g=1;dir=bwd_data");
}

TEST(PlannerDirections, TwoCallsOfOneKernelMerge) {
  // Two ConvGradFilter nodes of the same layer geometry are one kernel with two call sites.
  GraphBuilder b;
  const ir::ValueId x = b.input("x", {2, 3, 5, 5});
  const ir::ValueId dy = b.input("dy", {2, 4, 5, 5});
  ir::Attributes attrs = conv_attrs(3, 1, 1);
  attrs.set("filter_shape", std::vector<int64_t>{4, 3, 3, 3});
  b.output(b.node(OpKind::kConvGradFilter, {x, dy}, {{4, 3, 3, 3}}, attrs)[0]);
  b.output(b.node(OpKind::kConvGradFilter, {x, dy}, {{4, 3, 3, 3}}, attrs)[0]);
  auto kernels = collect_conv_kernels(b.finish(), test_device());
  ASSERT_TRUE(kernels.has_value()) << kernels.status().to_string();
  ASSERT_EQ(kernels->size(), 1u);
  EXPECT_EQ((*kernels)[0].nodes, (std::vector<ir::NodeId>{0, 1}));
  EXPECT_EQ((*kernels)[0].direction(), ConvDirection::kBackwardFilter);
}

TEST(PlannerDirections, BackwardNodeWithoutItsShapeAttributeIsRefused) {
  ir::Graph graph = training_graph();
  graph.nodes[kConv2GradData].attrs = conv_attrs(3, 2, 1);  // input_shape dropped
  auto kernels = collect_conv_kernels(graph, test_device());
  ASSERT_FALSE(kernels.has_value());
  EXPECT_EQ(kernels.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(kernels.status().message().find("input_shape"), std::string::npos) << kernels.status().message();
  EXPECT_NE(kernels.status().message().find(graph.nodes[kConv2GradData].name), std::string::npos);

  // A filter_shape that does not give dY's shape with X and the attributes.
  graph = training_graph();
  ir::Attributes filter = conv_attrs(3, 2, 1);
  filter.set("filter_shape", std::vector<int64_t>{6, 4, 5, 5});
  graph.nodes[kConv2GradFilter].attrs = filter;
  kernels = collect_conv_kernels(graph, test_device());
  ASSERT_FALSE(kernels.has_value());
  EXPECT_NE(kernels.status().message().find(graph.nodes[kConv2GradFilter].name), std::string::npos)
      << kernels.status().message();
}

TEST(PlannerDirections, AlgorithmCountsPerDirection) {
  ConvKernelKey key = test_device();
  const std::pair<ConvDirection, OpKind> ops[] = {{ConvDirection::kForward, OpKind::kConv},
                                                  {ConvDirection::kBackwardData, OpKind::kConvGradData},
                                                  {ConvDirection::kBackwardFilter, OpKind::kConvGradFilter}};
  for (const auto& [direction, op] : ops) {
    key.direction = direction;
    key.sm_count = 0;
    EXPECT_EQ(conv_direction_op(direction), op);
    EXPECT_EQ(algorithm_count(key), cpu::cpu_algorithm_count(op)) << conv_direction_name(direction);
    EXPECT_GE(max_algorithm_count(), algorithm_count(key));
  }
  key.sm_count = 132;  // cuDNN 9's enums; forward also UCUDNN_DEPTHWISE (runtime/cuda/depthwise_conv.h)
  const int cudnn[] = {24, 6, 7};  // forward: ids up to the graph API's 16 + 8 (runtime/cuda/cudnn_graph.h)
  for (int d = 0; d < 3; ++d) {
    key.direction = ops[d].first;
    EXPECT_EQ(algorithm_count(key), cudnn[d]);
  }
}

// The database reads a backward key's rows back, and checks their algorithms against the
// count of the key's own direction.
TEST(PlannerDirections, BackwardKeysRoundTripThroughTheDatabase) {
  ucudnn_test::TempDir dir("planner_directions_db");
  auto db = BenchmarkDb::open(dir.file("db.sqlite"));
  ASSERT_TRUE(db.has_value()) << db.status().to_string();
  ConvKernelKey key = test_device();
  key.device_name = "NVIDIA H200";
  key.sm_count = 132;
  key.n = 8, key.c = 4, key.h = 8, key.w = 8, key.k = 6, key.r = 3, key.s = 3;
  auto timings_with = [](int algorithm) {
    KernelTimings t;
    t.by_batch[4] = {{algorithm, "name", 1.5, 256, true}};
    t.by_batch[8] = {{0, "ALGO_0", 2.5, 0, true}, {1, "ALGO_1", 3.0, 512, false}};
    return t;
  };
  for (ConvDirection direction :
       {ConvDirection::kForward, ConvDirection::kBackwardData, ConvDirection::kBackwardFilter}) {
    key.direction = direction;
    const std::string text = key.to_string();
    ASSERT_TRUE(parse_kernel_key(text).has_value()) << text;
    // Algorithm 5 exists in every direction (6, 7, 8 algorithms); 6 exists except in bwd_data.
    ASSERT_TRUE(db->store(text, timings_with(5)).is_ok());
    auto read = db->lookup(text);
    ASSERT_TRUE(read.has_value()) << read.status().to_string();
    ASSERT_TRUE(read->has_value()) << text;
    EXPECT_EQ(**read, timings_with(5));

    ASSERT_TRUE(db->store(text, timings_with(6)).is_ok());
    read = db->lookup(text);
    if (direction == ConvDirection::kBackwardData) {
      ASSERT_FALSE(read.has_value()) << "cuDNN has 6 backward-data algorithms: 6 is out of range";
      EXPECT_NE(read.status().message().find("algorithm"), std::string::npos) << read.status().message();
    } else {
      ASSERT_TRUE(read.has_value()) << read.status().to_string();
      EXPECT_EQ(**read, timings_with(6));
    }
  }
  // The three directions of one geometry are three kernels.
  auto count = db->kernel_count();
  ASSERT_TRUE(count.has_value());
  EXPECT_EQ(*count, 3);
}

// --- Plans from hand-written timings ----------------------------------------------------------

// Every convolution step of `result.plan` runs its kernel's configuration in its slice.
void expect_steps_follow_kernels(const ir::Graph& graph, const PlanResult& result) {
  ASSERT_EQ(result.kernels.size(), result.policy.kernels.size());
  std::vector<int> covered(graph.nodes.size(), 0);
  for (size_t k = 0; k < result.kernels.size(); ++k) {
    const KernelPlan& kp = result.policy.kernels[k];
    for (ir::NodeId node : result.kernels[k].nodes) {
      const runtime::PlanStep& step = result.plan.steps[node];
      EXPECT_EQ(step.micro_batches, kp.config.parts) << graph.nodes[node].name;
      EXPECT_EQ(step.workspace_offset, kp.workspace_offset) << graph.nodes[node].name;
      EXPECT_EQ(step.workspace_bytes, kp.workspace_size) << graph.nodes[node].name;
      EXPECT_TRUE(runtime::micro_batches_cover(step.micro_batches, 8)) << graph.nodes[node].name;
      ++covered[node];
    }
  }
  for (size_t n = 0; n < graph.nodes.size(); ++n) EXPECT_EQ(covered[n], 1) << graph.nodes[n].name;
}

TEST(PlannerDirections, UndividedAndWrPlanEveryDirection) {
  const ir::Graph graph = training_graph();
  // Per-kernel limit 16 KiB: the fast algorithm's 8 samples fit for conv1 (8 KiB), conv2 and
  // conv1's bwd_filter (16 KiB), not for conv2's bwd_data and bwd_filter (32 KiB).
  auto undivided = plan_by_hand(graph, Policy::kUndivided, 16384);
  ASSERT_TRUE(undivided.has_value()) << undivided.status().to_string();
  expect_steps_follow_kernels(graph, *undivided);
  const int algorithm[kNodeCount] = {0, 0, 1, 1, 0};
  for (int n = 0; n < kNodeCount; ++n)
    EXPECT_EQ(undivided->plan.steps[n].micro_batches, (std::vector<runtime::MicroBatch>{{8, algorithm[n]}}))
        << graph.nodes[n].name;
  // 1.0625 + 2.0625 + 8 + 16 + 1.0625
  EXPECT_DOUBLE_EQ(undivided->policy.total_time_ms, 28.1875);

  // wr at the same limit runs conv2's backward kernels as 4 + 4 with the fast algorithm
  // (bwd_data 2 × 1.0625 = 2.125 ms instead of 8; bwd_filter 2 × 2.0625 = 4.125 instead of 16).
  auto wr = plan_by_hand(graph, Policy::kWr, 16384);
  ASSERT_TRUE(wr.has_value()) << wr.status().to_string();
  expect_steps_follow_kernels(graph, *wr);
  const std::vector<runtime::MicroBatch> halves = {{4, 0}, {4, 0}};
  EXPECT_EQ(wr->plan.steps[kConv2GradData].micro_batches, halves);
  EXPECT_EQ(wr->plan.steps[kConv2GradFilter].micro_batches, halves);
  EXPECT_EQ(wr->plan.steps[kConv1].micro_batches, (std::vector<runtime::MicroBatch>{{8, 0}}));
  EXPECT_DOUBLE_EQ(wr->policy.total_time_ms, 1.0625 + 2.0625 + 2.125 + 4.125 + 1.0625);
  EXPECT_LE(wr->plan.workspace_pool_bytes, 16384u);
}

// The best total time over one Pareto-front point per kernel whose aligned workspaces sum to at
// most `budget`: what the ILP must find, by trying every combination.
double exhaustive_wd_optimum(const GraphTimings& timings, size_t budget) {
  std::vector<std::vector<Configuration>> fronts;
  for (const NamedKernel& kernel : timings.timings) {
    auto front = pareto_front(kernel.timings, 8, {1, 2, 4, 8}, kernel.name);
    if (!front) {
      ADD_FAILURE() << front.status().to_string();
      return std::numeric_limits<double>::infinity();
    }
    fronts.push_back(*front);
  }
  double best = std::numeric_limits<double>::infinity();
  std::function<void(size_t, double, size_t)> visit = [&](size_t k, double time, size_t bytes) {
    if (bytes > budget) return;
    if (k == fronts.size()) {
      best = std::min(best, time);
      return;
    }
    for (const Configuration& c : fronts[k])
      visit(k + 1, time + c.time_ms, bytes + align_up(c.workspace_bytes, kWorkspaceAlignment));
  };
  visit(0, 0.0, 0);
  return best;
}

TEST(PlannerDirections, WdDividesOneBudgetAcrossAllDirections) {
  const ir::Graph graph = training_graph();
  for (size_t budget : {size_t{12288}, size_t{24576}, size_t{49152}}) {
    SCOPED_TRACE("budget " + std::to_string(budget));
    auto wd = plan_by_hand(graph, Policy::kWd, budget, /*division_threshold=*/0.0);
    ASSERT_TRUE(wd.has_value()) << wd.status().to_string();
    expect_steps_follow_kernels(graph, *wd);
    // One slice per kernel, side by side, all within the one budget.
    size_t end = 0;
    bool backward_divided = false;
    for (size_t k = 0; k < wd->policy.kernels.size(); ++k) {
      const KernelPlan& kp = wd->policy.kernels[k];
      EXPECT_EQ(kp.workspace_offset, end) << k;
      EXPECT_GE(kp.workspace_size, kp.config.workspace_bytes) << k;
      end = kp.workspace_offset + kp.workspace_size;
      if (wd->kernels[k].direction() != ConvDirection::kForward && kp.config.is_divided()) backward_divided = true;
    }
    EXPECT_LE(end, budget);
    EXPECT_LE(wd->plan.workspace_pool_bytes, budget);
    EXPECT_TRUE(backward_divided) << "a tight budget runs some backward kernel as micro-batches";
    EXPECT_DOUBLE_EQ(wd->policy.total_time_ms, exhaustive_wd_optimum(hand_written_timings(graph), budget));
    EXPECT_DOUBLE_EQ(wd->plan.predicted_conv_ms, wd->policy.total_time_ms);
  }
  // Below the smallest workspace every kernel needs (none: the slow algorithm needs 0), wd still plans.
  auto starved = plan_by_hand(graph, Policy::kWd, 0);
  ASSERT_TRUE(starved.has_value()) << starved.status().to_string();
  for (int n = 0; n < kNodeCount; ++n)
    EXPECT_EQ(starved->plan.steps[n].micro_batches, (std::vector<runtime::MicroBatch>{{8, 1}})) << n;
}

TEST(PlannerDirections, TimingsMustMatchTheNodesDirections) {
  const ir::Graph graph = training_graph();
  GraphTimings timings = hand_written_timings(graph);
  timings.kernels[kConv2GradFilter].key.direction = ConvDirection::kBackwardData;
  auto refused = plan_from_timings(graph, "cpu", {}, std::move(timings));
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("another direction"), std::string::npos) << refused.status().message();

  // A backward node left out of the timings.
  timings = hand_written_timings(graph);
  timings.kernels.pop_back();
  timings.timings.pop_back();
  refused = plan_from_timings(graph, "cpu", {}, std::move(timings));
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.status().message().find(graph.nodes[kConv1GradFilter].name), std::string::npos)
      << refused.status().message();
}

TEST(PlannerDirections, EachConvolutionDividesItsOwnBatch) {
  // A Conv at batch 8 beside a ConvGradData whose dY has batch 4: that kernel's batch is dY's
  // (input_shape's 8 is the full batch it was built for), and each kernel's micro-batches divide its own.
  GraphBuilder b;
  const ir::ValueId x = b.input("x", {8, 4, 8, 8});
  const ir::ValueId dy = b.input("dy", {4, 6, 4, 4});
  const ir::ValueId w = b.constant("w", ucudnn_test::random_tensor({6, 4, 3, 3}, 2));
  b.output(b.node(OpKind::kConv, {x, w}, {{8, 6, 4, 4}}, conv_attrs(3, 2, 1))[0]);
  ir::Attributes data = conv_attrs(3, 2, 1);
  data.set("input_shape", std::vector<int64_t>{8, 4, 8, 8});
  b.output(b.node(OpKind::kConvGradData, {dy, w}, {{4, 4, 8, 8}}, data)[0]);
  const ir::Graph graph = b.finish();
  auto kernels = collect_conv_kernels(graph, test_device());
  ASSERT_TRUE(kernels.has_value()) << kernels.status().to_string();
  ASSERT_EQ(kernels->size(), 2u);
  EXPECT_EQ((*kernels)[1].batch(), 4);
  EXPECT_EQ((*kernels)[1].key.n, 4);
  EXPECT_EQ((*kernels)[1].x_shape, (Shape{4, 4, 8, 8}));
  // Algorithm 0 needs 1 KiB per sample, algorithm 1 none but takes 4x as long: under a 2 KiB limit per
  // kernel the fastest plan runs algorithm 0 on micro-batches of 2.
  GraphTimings timings;
  timings.kernels = *kernels;
  for (size_t k = 0; k < kernels->size(); ++k) {
    KernelTimings t;
    for (int64_t b : {1, 2, 4, 8}) {
      if (b > (*kernels)[k].batch()) continue;
      const double n = static_cast<double>(b);
      t.by_batch[b] = {{0, "fast", 0.125 * n, size_t{1024} * static_cast<size_t>(b), true},
                       {1, "slow", 0.5 * n, 0, true}};
    }
    timings.timings.push_back({"k" + std::to_string(k), t, 1});
  }
  PlannerOptions options;
  options.policy = Policy::kWr;
  options.workspace_bytes = 2048;
  auto planned = plan_from_timings(graph, "cpu", options, std::move(timings));
  ASSERT_TRUE(planned.has_value()) << planned.status().to_string();
  for (size_t k = 0; k < 2; ++k) {
    const std::vector<MicroBatch>& parts = planned->plan.steps[(*kernels)[k].nodes.front()].micro_batches;
    int64_t sum = 0;
    for (const MicroBatch& m : parts) {
      EXPECT_EQ(m.size, 2);
      EXPECT_EQ(m.algorithm, 0);
      sum += m.size;
    }
    EXPECT_EQ(sum, (*kernels)[k].batch()) << "kernel " << k;
  }
  EXPECT_DOUBLE_EQ(planned->policy.total_time_ms, 0.125 * 8 + 0.125 * 4);
}

TEST(PlannerDirections, BackwardConvolutionsStayOnTheMainStream) {
  const ir::Graph graph = training_graph();
  PlannerOptions options;
  options.policy = Policy::kWd;
  options.workspace_bytes = 1 << 20;
  options.streams = 2;
  options.share_workspace = true;
  auto result = plan_from_timings(graph, "cpu", options, hand_written_timings(graph));
  ASSERT_TRUE(result.has_value()) << result.status().to_string();
  for (ir::NodeId n : result->side_steps) EXPECT_EQ(graph.nodes[n].op, OpKind::kConv);
  for (int n = kConv2GradData; n < kNodeCount; ++n)
    EXPECT_EQ(result->plan.steps[n].stream, runtime::kMainStream) << graph.nodes[n].name;
  EXPECT_TRUE(runtime::check_side_streams(graph, result->plan).is_ok());
}

TEST(PlannerDirections, ReportShowsEachKernelsDirection) {
  const ir::Graph graph = training_graph();
  auto wd = plan_by_hand(graph, Policy::kWd, 24576);
  ASSERT_TRUE(wd.has_value()) << wd.status().to_string();
  const ReportData data = build_report(*wd, graph, "training");
  const char* expected[kNodeCount] = {"fwd", "fwd", "bwd_data", "bwd_filter", "bwd_filter"};
  ASSERT_EQ(data.kernels.size(), static_cast<size_t>(kNodeCount));
  for (int k = 0; k < kNodeCount; ++k) EXPECT_EQ(data.kernels[k].direction, expected[k]) << k;

  const std::string text = report_text(data);
  EXPECT_NE(text.find("kernel 3/5 (bwd_data): " + graph.nodes[kConv2GradData].name), std::string::npos) << text;
  EXPECT_NE(text.find("kernel 5/5 (bwd_filter): " + graph.nodes[kConv1GradFilter].name), std::string::npos);
  EXPECT_NE(text.find("kernel 1/5 (fwd): " + graph.nodes[kConv1].name), std::string::npos);

  const nlohmann::json json = report_json(data);
  for (int k = 0; k < kNodeCount; ++k) EXPECT_EQ(json["kernels"][k]["direction"], expected[k]) << k;

  const std::string html = report_html(data);
  EXPECT_NE(html.find("<th>dir</th>"), std::string::npos);
  EXPECT_NE(html.find("<td>bwd_filter</td>"), std::string::npos);
  EXPECT_NE(html.find("<td>bwd_data</td>"), std::string::npos);
}

// --- The CPU: measured backward kernels, and executed micro-batches ----------------------------

TEST(PlannerDirections, CpuBenchmarkerTimesEveryBackwardAlgorithm) {
  const ir::Graph graph = training_graph();
  const std::unique_ptr<Benchmarker> bench = make_cpu_benchmarker({.warmup = 0, .repeats = 1, .max_repeats = 1});
  auto kernels = collect_conv_kernels(graph, bench->device_key());
  ASSERT_TRUE(kernels.has_value()) << kernels.status().to_string();
  const std::unique_ptr<runtime::Backend> backend = cpu::make_cpu_backend();
  for (Node n : {kConv2GradData, kConv2GradFilter, kConv1GradFilter}) {
    const ir::Node& node = graph.nodes[n];
    SCOPED_TRACE(node.name);
    auto timings = bench->measure(graph, (*kernels)[n], {1, 4, 8});
    ASSERT_TRUE(timings.has_value()) << timings.status().to_string();
    ASSERT_EQ(timings->by_batch.size(), 3u);
    for (const auto& [size, row] : timings->by_batch) {
      ASSERT_EQ(static_cast<int>(row.size()), cpu::cpu_algorithm_count(node.op));
      for (int a = 0; a < static_cast<int>(row.size()); ++a) {
        EXPECT_EQ(row[a].algorithm, a);
        EXPECT_EQ(row[a].name, cpu::cpu_conv_grad_algorithm_name(a));
        // What the executor's call of this micro-batch asks for (dW whole for ConvGradFilter).
        const size_t asked = cpu::cpu_step_workspace(graph, node, size, a);
        EXPECT_EQ(row[a].available, asked != SIZE_MAX) << "size " << size << " algorithm " << a;
        // An algorithm that does not apply is stored with no workspace (the database takes 0 to 2^48).
        EXPECT_EQ(row[a].workspace_bytes, row[a].available ? asked : 0) << "size " << size << " algorithm " << a;
        if (row[a].available) {
          EXPECT_GE(row[a].time_ms, 0.0);
        }
      }
      // The 1x1 algorithm does not apply to these 3x3 convolutions; the GEMM ones do, and
      EXPECT_FALSE(row[static_cast<int>(cpu::CpuConvGradAlgorithm::kGemm1x1)].available);
      EXPECT_TRUE(row[static_cast<int>(cpu::CpuConvGradAlgorithm::kGemm)].available);
      // oneDNN's, blocked and plain, in a build with it.
      EXPECT_EQ(row[static_cast<int>(cpu::CpuConvGradAlgorithm::kOnednn)].available, cpu::onednn::built_in());
      EXPECT_EQ(row[static_cast<int>(cpu::CpuConvGradAlgorithm::kOnednnPlain)].available, cpu::onednn::built_in());
    }
  }
}

// A benchmarker that must not run: every timing comes from the database.
class NoBenchmarker final : public Benchmarker {
 public:
  explicit NoBenchmarker(ConvKernelKey device) : device_(std::move(device)) {}
  ConvKernelKey device_key() const override { return device_; }
  Expected<KernelTimings> measure(const ir::Graph&, const ConvKernel& kernel, const std::vector<int64_t>&) override {
    return internal_error("kernel " + kernel.key.to_string() + " should have come from the database");
  }

 private:
  ConvKernelKey device_;
};

Expected<std::vector<Tensor>> run_on_cpu(const ir::Graph& graph, runtime::Plan plan,
                                         const std::vector<Tensor>& inputs) {
  const std::unique_ptr<runtime::Backend> backend = cpu::make_cpu_backend();
  UCUDNN_ASSIGN_OR_RETURN(auto executor, runtime::Executor::create(*backend, graph, std::move(plan)));
  return executor->run(inputs);
}

std::vector<Tensor> graph_inputs(const ir::Graph& graph) {
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < graph.inputs.size(); ++i)
    inputs.push_back(ucudnn_test::random_tensor(graph.value(graph.inputs[i]).shape, 10 + static_cast<uint32_t>(i)));
  return inputs;
}

void expect_same_outputs(const std::vector<Tensor>& a, const std::vector<Tensor>& b, const ir::Graph& graph) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t o = 0; o < a.size(); ++o) {
    SCOPED_TRACE(graph.value(graph.outputs[o]).name);
    ASSERT_EQ(a[o].shape(), b[o].shape());
    for (int64_t i = 0; i < a[o].numel(); ++i) {
      const float x = a[o].data<float>()[i], y = b[o].data<float>()[i];
      ASSERT_NEAR(x, y, 1e-4f * (1.0f + std::abs(x))) << "element " << i;
    }
  }
}

// Measured on this CPU, stored, planned under wd, read back from the database, and run: the plan
// divides backward kernels and computes what the undivided plan computes.
TEST(PlannerDirections, MeasuredPlanRunsMicroBatchedBackwardConvolutionsOnCpu) {
  const ir::Graph graph = training_graph();
  ucudnn_test::TempDir dir("planner_directions_cpu");
  auto db = BenchmarkDb::open(dir.file("db.sqlite"));
  ASSERT_TRUE(db.has_value()) << db.status().to_string();
  const std::unique_ptr<Benchmarker> bench = make_cpu_benchmarker({.warmup = 0, .repeats = 1, .max_repeats = 1});
  auto measured = gather_timings(graph, BatchSizePolicy::kPowerOfTwo, *bench, &*db, false, false);
  ASSERT_TRUE(measured.has_value()) << measured.status().to_string();
  EXPECT_EQ(measured->kernels_benchmarked, kNodeCount);
  NoBenchmarker stored(bench->device_key());
  auto reused = gather_timings(graph, BatchSizePolicy::kPowerOfTwo, stored, &*db, false, false);
  ASSERT_TRUE(reused.has_value()) << reused.status().to_string();
  EXPECT_EQ(reused->kernels_reused, kNodeCount);
  for (size_t k = 0; k < reused->timings.size(); ++k) {
    EXPECT_EQ(reused->timings[k].timings, measured->timings[k].timings) << k;
    EXPECT_EQ(reused->timings[k].name, measured->timings[k].name) << k;
  }
  EXPECT_NE(reused->timings[kConv2GradFilter].name.find("bwd_filter"), std::string::npos);

  PlannerOptions options;
  options.policy = Policy::kUndivided;
  options.workspace_bytes = kUnlimitedWorkspace;
  auto undivided = plan_from_timings(graph, "cpu", options, *reused);
  ASSERT_TRUE(undivided.has_value()) << undivided.status().to_string();

  // wd with a budget below what the whole-batch GEMMs take, forcing micro-batches somewhere, but never below
  // the smallest budget these timings admit (timings measured once under load can make a quarter too little).
  size_t whole = 0;
  for (const KernelPlan& kp : undivided->policy.kernels) whole += kp.config.workspace_bytes;
  size_t smallest = 0;
  for (const NamedKernel& kernel : reused->timings) {
    const auto least =
        smallest_feasible_workspace(kernel.timings, 8, micro_batch_sizes(BatchSizePolicy::kPowerOfTwo, 8));
    ASSERT_TRUE(least.has_value()) << kernel.name;
    smallest += (*least + kWorkspaceAlignment - 1) / kWorkspaceAlignment * kWorkspaceAlignment;
  }
  options.policy = Policy::kWd;
  options.workspace_bytes = std::max(whole / 4, smallest);
  auto wd = plan_from_timings(graph, "cpu", options, *reused);
  ASSERT_TRUE(wd.has_value()) << wd.status().to_string();
  EXPECT_LE(wd->plan.workspace_pool_bytes, options.workspace_bytes);

  const std::vector<Tensor> inputs = graph_inputs(graph);
  auto expected = run_on_cpu(graph, undivided->plan, inputs);
  ASSERT_TRUE(expected.has_value()) << expected.status().to_string();
  auto got = run_on_cpu(graph, wd->plan, inputs);
  ASSERT_TRUE(got.has_value()) << got.status().to_string();
  expect_same_outputs(*expected, *got, graph);
}

// Every convolution step of `plan` as micro-batches 3 + 1 + 4 with two algorithms of its
// direction that apply to any convolution (ConvGradFilter's dW written by the first call, added
// to by the others), each step with the workspace its calls ask for.
runtime::Plan divide_every_convolution(const ir::Graph& graph, runtime::Plan plan) {
  for (runtime::PlanStep& step : plan.steps) {
    const ir::Node& node = graph.nodes[step.node];
    if (!ir::is_convolution(node)) continue;
    const bool backward = node.op != OpKind::kConv;
    const int first = backward ? static_cast<int>(cpu::CpuConvGradAlgorithm::kGemm) : 0;
    const int second = backward ? static_cast<int>(cpu::CpuConvGradAlgorithm::kGemmPerSample) : 3;
    step.micro_batches = {{3, first}, {1, second}, {4, first}};
    step.workspace_offset = 0;
    step.workspace_bytes = 0;
    for (const runtime::MicroBatch& m : step.micro_batches)
      step.workspace_bytes = std::max(step.workspace_bytes, cpu::cpu_step_workspace(graph, node, m.size, m.algorithm));
    plan.workspace_pool_bytes = std::max(plan.workspace_pool_bytes, step.workspace_bytes);
  }
  return plan;
}

// Every convolution as micro-batches 3 + 1 + 4 with different algorithms (ConvGradFilter's dW
// written by the first call, added to by the others) computes what one whole call does.
TEST(PlannerDirections, UnevenMicroBatchesMatchWholeCallsOnCpu) {
  const ir::Graph graph = training_graph();
  auto whole = plan_by_hand(graph, Policy::kUndivided, kUnlimitedWorkspace);
  ASSERT_TRUE(whole.has_value()) << whole.status().to_string();
  runtime::Plan plain = whole->plan;
  for (runtime::PlanStep& step : plain.steps) {  // one call, the default algorithm
    step.micro_batches.clear();
    step.workspace_offset = 0;
    step.workspace_bytes = cpu::cpu_step_workspace(graph, graph.nodes[step.node], 0, -1);
    plain.workspace_pool_bytes = std::max(plain.workspace_pool_bytes, step.workspace_bytes);
  }
  const runtime::Plan divided = divide_every_convolution(graph, plain);
  const std::vector<Tensor> inputs = graph_inputs(graph);
  auto expected = run_on_cpu(graph, plain, inputs);
  ASSERT_TRUE(expected.has_value()) << expected.status().to_string();
  auto got = run_on_cpu(graph, divided, inputs);
  ASSERT_TRUE(got.has_value()) << got.status().to_string();
  expect_same_outputs(*expected, *got, graph);
}


// --- A real training graph ---------------------------------------------------------------------

// Made-up times with the CPU kernels' real workspaces (so the executor accepts the plan): every
// CPU algorithm of the kernel's op at each size, an algorithm that takes workspace three times
// faster than one that takes none, each call with a fixed overhead.
class SyntheticBenchmarker final : public Benchmarker {
 public:
  ConvKernelKey device_key() const override { return test_device(); }
  Expected<KernelTimings> measure(const ir::Graph& graph, const ConvKernel& kernel,
                                  const std::vector<int64_t>& sizes) override {
    const ir::Node& node = graph.nodes[kernel.nodes.front()];
    KernelTimings t;
    const double work = static_cast<double>(kernel.key.c * kernel.key.k * kernel.key.h * kernel.key.w) * 1e-6;
    for (int64_t b : sizes) {
      for (int a = 0; a < cpu::cpu_algorithm_count(node.op); ++a) {
        const size_t bytes = cpu::cpu_step_workspace(graph, node, b, a);
        const bool applies = bytes != SIZE_MAX;
        const double time = 0.001 + work * static_cast<double>(b) * (bytes == 0 ? 3 : 1);
        t.by_batch[b].push_back({a, "", applies ? time : 0.0, applies ? bytes : 0, applies});
      }
    }
    return t;
  }
};

// tiny_cnn's training graph (training/training_graph.h): every Conv's backward calls are kernels,
// planned with the forward ones under one wd budget, and the divided plan computes the loss and
// gradients the undivided one does.
TEST(PlannerDirections, TinyCnnTrainingGraphPlansAndRunsEveryDirection) {
  onnx_import::ImportOptions import;
  import.batch = 8;
  auto inference = onnx_import::load_model(ucudnn_test::source_dir() + "/models/tiny/tiny_cnn/model.onnx", import);
  ASSERT_TRUE(inference.has_value()) << inference.status().to_string();
  auto training = training::build_training_graph(*inference, {});
  ASSERT_TRUE(training.has_value()) << training.status().to_string();
  const ir::Graph& graph = training->graph;

  SyntheticBenchmarker bench;
  auto timings = gather_timings(graph, BatchSizePolicy::kPowerOfTwo, bench, nullptr, false, false);
  ASSERT_TRUE(timings.has_value()) << timings.status().to_string();
  int convs[3] = {0, 0, 0}, kernel_nodes[3] = {0, 0, 0};
  for (const ir::Node& node : graph.nodes)
    if (auto direction = conv_node_direction(node)) ++convs[static_cast<int>(*direction)];
  for (const ConvKernel& kernel : timings->kernels)
    kernel_nodes[static_cast<int>(kernel.direction())] += static_cast<int>(kernel.nodes.size());
  EXPECT_EQ(convs[0], 2) << "tiny_cnn has two convolutions";
  EXPECT_EQ(convs[2], 2) << "each Conv's W is a parameter: one ConvGradFilter each";
  EXPECT_GE(convs[1], 1) << "the second Conv's input needs its gradient";
  for (int d = 0; d < 3; ++d) EXPECT_EQ(kernel_nodes[d], convs[d]) << conv_direction_name(static_cast<ConvDirection>(d));

  PlannerOptions options;
  options.policy = Policy::kUndivided;
  options.workspace_bytes = kUnlimitedWorkspace;
  auto undivided = plan_from_timings(graph, "cpu", options, *timings);
  ASSERT_TRUE(undivided.has_value()) << undivided.status().to_string();
  // wd halfway between the least workspace every kernel can do with and what the fastest
  // whole-batch calls take.
  size_t whole = 0, least = 0;
  for (size_t k = 0; k < undivided->kernels.size(); ++k) {
    whole += align_up(undivided->policy.kernels[k].config.workspace_bytes, kWorkspaceAlignment);
    auto front = pareto_front(timings->timings[k].timings, 8, {1, 2, 4, 8});
    ASSERT_TRUE(front.has_value()) << front.status().to_string();
    least += align_up(front->front().workspace_bytes, kWorkspaceAlignment);
  }
  ASSERT_LT(least, whole);
  options.policy = Policy::kWd;
  options.workspace_bytes = (least + whole) / 2;
  auto wd = plan_from_timings(graph, "cpu", options, *timings);
  ASSERT_TRUE(wd.has_value()) << wd.status().to_string();
  size_t slices = 0;
  for (const KernelPlan& kp : wd->policy.kernels) slices += kp.workspace_size;
  EXPECT_LE(slices, options.workspace_bytes);
  EXPECT_GE(wd->policy.total_time_ms, undivided->policy.total_time_ms);

  std::vector<Tensor> inputs;
  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    const ir::Value& input = graph.value(graph.inputs[i]);
    if (input.dtype == DType::kInt64) {  // the labels (classes 0 .. C-1), a dropout seed
      const int64_t classes = graph.value(graph.outputs[training->logits_output]).shape.back();
      auto values = Tensor::allocate(DType::kInt64, input.shape);
      ASSERT_TRUE(values.has_value());
      for (int64_t j = 0; j < values->numel(); ++j) values->data<int64_t>()[j] = (j + 1) % classes;
      inputs.push_back(std::move(*values));
    } else {
      inputs.push_back(ucudnn_test::random_tensor(input.shape, 20 + static_cast<uint32_t>(i)));
    }
  }
  auto expected = run_on_cpu(graph, undivided->plan, inputs);
  ASSERT_TRUE(expected.has_value()) << expected.status().to_string();
  for (const runtime::Plan& plan : {wd->plan, divide_every_convolution(graph, undivided->plan)}) {
    auto got = run_on_cpu(graph, plan, inputs);
    ASSERT_TRUE(got.has_value()) << got.status().to_string();
    expect_same_outputs(*expected, *got, graph);
  }
}

}  // namespace
}  // namespace ucudnn::optimizer
