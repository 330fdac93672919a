// Layout per region (Note [layout regions], optimizer/layout_regions.h): the minimum cut
// against every labelling, the labelling of a small model, the graph it makes (and what
// that graph computes on the CPU), and a GPU plan from recorded timings that keeps the
// one Conv NCHW that is faster there — through its plan file and back.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "api/loading.h"
#include "optimizer/bench/benchmark_db.h"
#include "optimizer/conv_kernels.h"
#include "optimizer/layout_regions.h"
#include "optimizer/min_cut.h"
#include "optimizer/passes/passes.h"
#include "optimizer/plan_model.h"
#include "runtime/cpu/conv_algorithms.h"
#include "runtime/cpu/cpu_backend.h"
#include "runtime/executor/executor.h"
#include "runtime/plan/plan_json.h"
#include "runtime/ir/layout.h"
#include "tests/support/graph_builder.h"
#include "tests/support/temp_dir.h"
#include "tests/support/tensor_checks.h"
#include "tests/test_paths.h"

namespace ucudnn {
namespace {

using optimizer::ConvTimes;
using optimizer::LayoutRegions;

// ---- MinCut ----

struct Edge {
  int from, to;
  double capacity;
};

// Σ capacity of the edges from a source-side node to a sink-side one.
double cut_of(const std::vector<Edge>& edges, const std::vector<bool>& source_side) {
  double sum = 0;
  for (const Edge& e : edges)
    if (source_side[e.from] && !source_side[e.to]) sum += e.capacity;
  return sum;
}

TEST(MinCut, FindsTheCheapestOfEveryLabellingOnRandomGraphs) {
  constexpr int kInner = 7;  // nodes 0..6; 7 is the source, 8 the sink
  constexpr int kSource = kInner, kSink = kInner + 1;
  for (uint32_t seed = 0; seed < 40; ++seed) {
    SCOPED_TRACE(seed);
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> capacity(0.0, 1.0);
    std::vector<Edge> edges;
    for (int a = 0; a < kInner + 2; ++a)
      for (int b = 0; b < kInner + 2; ++b)
        if (a != b && a != kSink && b != kSource && capacity(rng) < 0.35) edges.push_back({a, b, capacity(rng)});
    optimizer::MinCut cut(kInner + 2);
    for (const Edge& e : edges) cut.add_edge(e.from, e.to, e.capacity);
    const std::vector<bool> side = cut.source_side(kSource, kSink);
    ASSERT_TRUE(side[kSource]);
    ASSERT_FALSE(side[kSink]);

    double best = 1e300;
    for (int mask = 0; mask < (1 << kInner); ++mask) {
      std::vector<bool> labelling(kInner + 2, false);
      for (int i = 0; i < kInner; ++i) labelling[i] = (mask >> i) & 1;
      labelling[kSource] = true;
      best = std::min(best, cut_of(edges, labelling));
    }
    EXPECT_NEAR(cut_of(edges, side), best, 1e-9);
    EXPECT_NEAR(cut.cut_capacity(), best, 1e-9);
  }
}

// ---- choose_layout_regions on tiny_cnn: conv1 → Relu → MaxPool → conv2 → Relu → pool → Gemm ----

ir::Graph tiny_cnn(int64_t batch, const std::string& device = "cpu") {
  SessionOptions options;
  options.batch = batch;
  options.device = device == "cuda" ? Device::kCuda : Device::kCpu;
  auto graph = load_inference_graph(ucudnn_test::source_dir() + "/models/tiny/tiny_cnn/model.onnx", options);
  EXPECT_TRUE(graph.has_value()) << graph.status().to_string();
  return std::move(*graph);
}

TEST(LayoutRegions, KeepsNchwTheConvThatIsFasterThere) {
  const ir::Graph graph = tiny_cnn(8);
  const LayoutRegions regions = optimizer::choose_layout_regions(
      graph, ConvTimes{{"conv1", 1.0}, {"conv2", 0.2}}, ConvTimes{{"conv1", 0.5}, {"conv2", 1.0}}, {1e-9, 0});
  EXPECT_EQ(regions.nchw_convs, std::vector<std::string>{"conv2"});
  EXPECT_EQ(regions.convs, 2);
  EXPECT_TRUE(regions.mixed);
  // conv1 in NHWC and conv2 in NCHW, plus a few kilobytes of transposes at 1e-9 ms a byte.
  EXPECT_GT(regions.predicted_ms, 0.7);
  EXPECT_LT(regions.predicted_ms, 0.7001);
}

TEST(LayoutRegions, TransposesDearerThanTheGainKeepOneLayout) {
  const ir::Graph graph = tiny_cnn(8);
  // The same times, but a byte of transpose costs 1 ms: conv1's gain does not pay for its input's.
  const LayoutRegions regions = optimizer::choose_layout_regions(
      graph, ConvTimes{{"conv1", 1.0}, {"conv2", 0.2}}, ConvTimes{{"conv1", 0.5}, {"conv2", 1.0}}, {1.0, 0});
  EXPECT_EQ(regions.nchw_convs, (std::vector<std::string>{"conv1", "conv2"}));
  EXPECT_FALSE(regions.mixed);
  EXPECT_NEAR(regions.predicted_ms, 1.2, 1e-9);
}

TEST(LayoutRegions, EveryConvFasterInNhwcKeepsNone) {
  const ir::Graph graph = tiny_cnn(8);
  const LayoutRegions regions = optimizer::choose_layout_regions(
      graph, ConvTimes{{"conv1", 1.0}, {"conv2", 1.0}}, ConvTimes{{"conv1", 0.5}, {"conv2", 0.5}}, {1e-9, 0});
  EXPECT_TRUE(regions.nchw_convs.empty());
  EXPECT_FALSE(regions.mixed);
}

// Only NCHW↔NHWC Transposes are layout transposes; a Transpose without `perm` (reversed dims) is not.
TEST(LayoutRegions, PricesOnlyLayoutTransposes) {
  ucudnn_test::GraphBuilder b;
  const ir::ValueId x = b.input("x", {2, 3, 4, 5});
  b.output(b.transpose(x, ir::kNchwToNhwcPerm), "nhwc");
  b.output(b.transpose(x, {0, 1, 3, 2}), "swapped");
  b.output(b.node(OpKind::kTranspose, {x}, {{5, 4, 3, 2}})[0], "reversed");
  const ir::Graph graph = b.finish();
  EXPECT_DOUBLE_EQ(optimizer::layout_transposes_ms(graph, {0.5, 1.0}), 2 * 3 * 4 * 5 * 4 * 0.5 + 1.0);
}

// ---- the graph convert_to_channels_last makes from the list ----

int count_transposes(const ir::Graph& graph) {
  return static_cast<int>(std::count_if(graph.nodes.begin(), graph.nodes.end(),
                                        [](const ir::Node& n) { return n.op == OpKind::kTranspose; }));
}

const ir::Node& node_named(const ir::Graph& graph, const std::string& name) {
  for (const ir::Node& node : graph.nodes)
    if (node.name == name) return node;
  ADD_FAILURE() << "no node " << name;
  return graph.nodes.front();
}

TEST(LayoutRegions, NamedConvsStayNchwAndPoolsFollowTheirInput) {
  ir::Graph mixed = tiny_cnn(8);
  optimizer::PassStats stats;
  ASSERT_TRUE(optimizer::convert_to_channels_last_except(mixed, &stats, {"conv2"}).is_ok());
  EXPECT_TRUE(ir::is_channels_last(node_named(mixed, "conv1")));
  EXPECT_TRUE(ir::is_channels_last(node_named(mixed, "pool1")));  // its input is conv1's NHWC output
  EXPECT_FALSE(ir::is_channels_last(node_named(mixed, "conv2")));
  EXPECT_FALSE(ir::is_channels_last(node_named(mixed, "gap")));   // after conv2: NCHW again
  EXPECT_EQ(count_transposes(mixed), 2);  // the input to NHWC, pool1's output back for conv2
  EXPECT_STREQ(ir::graph_layout_name(mixed), "nhwc");

  ir::Graph wrong = tiny_cnn(8);
  const Status status = optimizer::convert_to_channels_last_except(wrong, &stats, {"conv9"});
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("'conv9'"), std::string::npos) << status.to_string();
}

// The output of `graph` on `input`, planned and run on the CPU.
Tensor run_on_cpu(const ir::Graph& graph, const Tensor& input) {
  optimizer::PlanRequest request;
  request.progress = false;
  const ucudnn_test::TempDir dir("ucudnn_regions_test");
  request.db_path = dir.file("cpu.sqlite");
  auto planned = optimizer::plan_model(graph, request);
  EXPECT_TRUE(planned.has_value()) << planned.status().to_string();
  std::unique_ptr<runtime::Backend> backend = cpu::make_cpu_backend();
  auto executor = runtime::Executor::create(*backend, planned->graph, planned->result.plan, runtime::CaptureMode::kOff);
  EXPECT_TRUE(executor.has_value()) << executor.status().to_string();
  auto outputs = (*executor)->run({input});
  EXPECT_TRUE(outputs.has_value()) << outputs.status().to_string();
  return std::move(outputs->front());
}

TEST(LayoutRegions, MixedGraphComputesWhatTheNchwOneDoes) {
  if (!cpu::cpu_runs_channels_last()) GTEST_SKIP() << "this build has no oneDNN: the CPU runs NCHW only";
  const ir::Graph nchw = tiny_cnn(2);
  for (const std::vector<std::string>& keep : {std::vector<std::string>{"conv1"}, std::vector<std::string>{"conv2"}}) {
    SCOPED_TRACE(keep.front());
    ir::Graph mixed = nchw;
    optimizer::PassStats stats;
    ASSERT_TRUE(optimizer::convert_to_channels_last_except(mixed, &stats, keep).is_ok());
    const Tensor input = ucudnn_test::random_tensor({2, 3, 8, 8}, 11);
    ucudnn_test::expect_close(run_on_cpu(mixed, input), run_on_cpu(nchw, input), {1e-5, 1e-4}, "output");
  }
}

// ---- a GPU plan from recorded timings ----

// One algorithm taking `ms_per_sample` × the micro-batch.
optimizer::KernelTimings linear(const std::vector<int64_t>& sizes, double ms_per_sample) {
  optimizer::KernelTimings t;
  for (int64_t b : sizes)
    t.by_batch[b] = {{1, "IMPLICIT_PRECOMP_GEMM", ms_per_sample * static_cast<double>(b), 0, true}};
  return t;
}

// Records `graph`'s kernels (in the layout the graph has) with per-sample times by Conv name.
void record(optimizer::BenchmarkDb& db, const ir::Graph& graph, const ConvTimes& ms_per_sample) {
  optimizer::ConvKernelKey device;
  device.device_name = "Recorded GPU";
  device.sm_count = 132;
  device.cuda_version = 13000;
  device.cudnn_version = 91900;
  device.driver_version = 13020;
  device.math_type = "tf32";
  auto kernels = optimizer::collect_conv_kernels(graph, device);
  ASSERT_TRUE(kernels.has_value()) << kernels.status().to_string();
  for (const optimizer::ConvKernel& kernel : *kernels) {
    const auto sizes = optimizer::micro_batch_sizes(optimizer::BatchSizePolicy::kPowerOfTwo, kernel.batch());
    const double ms = ms_per_sample.at(graph.nodes[kernel.nodes.front()].name);
    ASSERT_TRUE(db.store(kernel.key.to_string(), linear(sizes, ms)).is_ok());
  }
}

// --layout auto for "cuda" on tiny_cnn at batch 8 from a database recording each Conv's time per
// sample in each layout (conv1 and conv2, NCHW then NHWC).
Expected<optimizer::PlannedModel> plan_auto(const ir::Graph& graph, const std::string& path,
                                            const ConvTimes& nchw, const ConvTimes& nhwc) {
  {
    auto db = optimizer::BenchmarkDb::open(path, /*rebuild=*/true);
    if (!db) return db.status();
    ir::Graph channels_last = graph;
    optimizer::PassStats stats;
    UCUDNN_RETURN_IF_ERROR(optimizer::convert_to_channels_last(channels_last, &stats));
    record(*db, graph, nchw);
    record(*db, channels_last, nhwc);
  }
  optimizer::PlanRequest request;
  request.device = "cuda";
  request.layouts = {optimizer::GraphLayout::kNchw, optimizer::GraphLayout::kNhwc};
  request.db_path = path;
  request.progress = false;
  return optimizer::plan_model(graph, request);
}

TEST(LayoutRegions, AutoOnTheGpuPlansTheRegionsAndTheirPlanFileRebuildsThem) {
  if (cuda_available()) GTEST_SKIP() << "a GPU is present: planning for cuda measures on it instead";
  const ucudnn_test::TempDir dir("ucudnn_regions_test");
  const ir::Graph graph = tiny_cnn(8, "cuda");
  auto planned = plan_auto(graph, dir.file("gpu.sqlite"), {{"conv1", 0.2}, {"conv2", 0.05}},
                           {{"conv1", 0.1}, {"conv2", 0.2}});
  ASSERT_TRUE(planned.has_value()) << planned.status().to_string();
  const runtime::Plan& plan = planned->result.plan;
  EXPECT_EQ(plan.layout, "nhwc");
  EXPECT_EQ(plan.nchw_convs, std::vector<std::string>{"conv2"});
  // nchw 1.6 + 0.4 ms; nhwc 0.8 + 1.6 ms and the input's Transpose (0.01 ms + 6 KiB); the regions
  // 0.8 + 0.4 ms and two Transposes.
  EXPECT_NE(planned->layout_note.find("nchw 2.000 ms, nhwc 2.410 ms (0.010 ms of transposes), "
                                      "regions (1 of 2 Convs nchw) 1.220 ms (0.020 ms of transposes)"),
            std::string::npos) << planned->layout_note;

  // The plan file names conv2; the graph rebuilt from it is the planned one, and a file that
  // names another Conv is refused by the plan check.
  auto read = runtime::plan_from_json(runtime::plan_to_json(plan, planned->graph));
  ASSERT_TRUE(read.has_value()) << read.status().to_string();
  EXPECT_EQ(read->nchw_convs, plan.nchw_convs);
  ir::Graph rebuilt = graph;
  optimizer::PassStats stats;
  ASSERT_TRUE(optimizer::convert_to_channels_last_except(rebuilt, &stats, read->nchw_convs).is_ok());
  EXPECT_TRUE(runtime::check_plan_matches(*read, rebuilt, "cuda", plan.device_name).is_ok());
  ir::Graph lying = graph;
  ASSERT_TRUE(optimizer::convert_to_channels_last_except(lying, &stats, {"conv1"}).is_ok());
  EXPECT_FALSE(runtime::check_plan_matches(*read, lying, "cuda", plan.device_name).is_ok());
}

// The regions predicted less than kRegionsMargin faster than NHWC: NHWC runs, and the note says why.
TEST(LayoutRegions, RegionsWithinTheMarginAreNotKept) {
  if (cuda_available()) GTEST_SKIP() << "a GPU is present: planning for cuda measures on it instead";
  const ucudnn_test::TempDir dir("ucudnn_regions_test");
  const ir::Graph graph = tiny_cnn(8, "cuda");
  auto planned = plan_auto(graph, dir.file("gpu.sqlite"), {{"conv1", 0.2}, {"conv2", 0.05}},
                           {{"conv1", 0.1}, {"conv2", 0.057}});
  ASSERT_TRUE(planned.has_value()) << planned.status().to_string();
  EXPECT_EQ(planned->result.plan.layout, "nhwc");
  EXPECT_TRUE(planned->result.plan.nchw_convs.empty());
  // nhwc 0.8 + 0.456 + 0.010 ms; the regions 0.8 + 0.4 + 0.020 ms: 3.6 % faster, under the 5 % margin.
  EXPECT_NE(planned->layout_note.find("nhwc 1.266 ms (0.010 ms of transposes), regions (1 of 2 Convs nchw) 1.220 ms"),
            std::string::npos) << planned->layout_note;
}

TEST(LayoutRegions, PlanFileListsConvsOnlyForNhwc) {
  runtime::Plan plan;
  plan.device = "cuda";
  plan.layout = "nchw";
  plan.nchw_convs = {"conv2"};
  ir::Graph empty;
  auto read = runtime::plan_from_json(runtime::plan_to_json(plan, empty));
  ASSERT_FALSE(read.has_value());
  EXPECT_NE(read.status().message().find("nchw_convs"), std::string::npos) << read.status().to_string();
}

}  // namespace
}  // namespace ucudnn
