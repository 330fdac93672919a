// Tests of the planner on a real (tiny) model: the plan it emits per policy, a
// golden plan from a checked-in benchmark database, reuse of stored timings,
// plan JSON round trip and refusal, and that a divided plan computes the same
// outputs as the undivided one on the CPU.
//
// Regenerate the checked-in files with UCUDNN_UPDATE_GOLDEN=1 (then review the diff).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "onnx_import/onnx_import.h"
#include "optimizer/bench/benchmark_db.h"
#include "optimizer/passes/passes.h"
#include "optimizer/planner.h"
#include "runtime/cpu/conv_algorithms.h"
#include "runtime/executor/cpu_executor.h"
#include "runtime/executor/plan_json.h"
#include "runtime/executor/side_stream.h"
#include "tests/test_paths.h"

namespace ucudnn::optimizer {
namespace {

namespace fs = std::filesystem;

using ucudnn_test::source_dir;
bool update_golden() { return std::getenv("UCUDNN_UPDATE_GOLDEN") != nullptr; }

ir::Graph tiny_cnn(int64_t batch) {
  onnx_import::ImportOptions options;
  options.batch = batch;
  auto graph = onnx_import::load_model(source_dir() + "/models/tiny/tiny_cnn/model.onnx", options);
  EXPECT_TRUE(graph.has_value()) << graph.status().to_string();
  return std::move(*graph);
}

size_t cpu_workspace_of(const ir::Graph& graph, const ir::Node& node) {
  return runtime::cpu_step_workspace(graph, node, 0, -1);
}

// Deterministic timings shaped like cuDNN's: a "fast" algorithm whose workspace
// grows with the micro-batch, and a workspace-free one three times slower; each
// call costs a small fixed overhead, so dividing is not free.
class SyntheticBenchmarker final : public Benchmarker {
 public:
  int calls = 0;
  bool fail = false;  // prove that timings came from the database
  ConvKernelKey device_key() const override {
    ConvKernelKey key;
    key.device_name = "test-device";
    return key;
  }
  Expected<KernelTimings> measure(const ir::Graph&, const ConvKernel& kernel,
                                  const std::vector<int64_t>& sizes) override {
    ++calls;
    if (fail) return internal_error("the benchmarker must not run: timings are in the database");
    KernelTimings t;
    const double work = static_cast<double>(kernel.key.c * kernel.key.k * kernel.key.h * kernel.key.w) * 1e-6;
    for (int64_t b : sizes) {
      const double n = static_cast<double>(b);
      t.by_batch[b] = {
          {static_cast<int>(cpu::CpuConvAlgorithm::kIm2colGemm), "im2col_gemm", 0.001 + work * n,
           static_cast<size_t>(b) * 4096, true},
          {static_cast<int>(cpu::CpuConvAlgorithm::kDirect), "direct", 0.001 + 3 * work * n, 0, true},
      };
    }
    return t;
  }
};

TEST(Planner, PoliciesOnTinyCnn) {
  ir::Graph graph = tiny_cnn(8);
  SyntheticBenchmarker bench;
  PlannerOptions options;
  options.progress = false;
  options.workspace_bytes = 4 * 4096;  // the fast algorithm fits micro-batches of ≤ 4

  options.policy = Policy::kUndivided;
  auto undivided = plan_graph(graph, "cpu", options, bench, nullptr, cpu_workspace_of);
  ASSERT_TRUE(undivided.has_value()) << undivided.status().to_string();
  ASSERT_EQ(undivided->kernels.size(), 2u);
  EXPECT_EQ(bench.calls, 2);

  options.policy = Policy::kWr;
  auto wr = plan_graph(graph, "cpu", options, bench, nullptr, cpu_workspace_of);
  ASSERT_TRUE(wr.has_value()) << wr.status().to_string();
  EXPECT_LT(wr->policy.total_time_ms, undivided->policy.total_time_ms);
  for (size_t k = 0; k < wr->kernels.size(); ++k) {
    const runtime::PlanStep& step = wr->plan.steps[wr->kernels[k].nodes[0]];
    ASSERT_EQ(step.micro_batches.size(), 2u) << "8 = 4 + 4 with the fast algorithm";
    EXPECT_EQ(step.micro_batches[0].size, 4);
    EXPECT_LE(step.workspace_bytes, options.workspace_bytes);
  }
  EXPECT_LE(wr->plan.workspace_pool_bytes, options.workspace_bytes);

  options.policy = Policy::kWd;  // one budget for both kernels: they cannot both take 4 × 4096
  auto wd = plan_graph(graph, "cpu", options, bench, nullptr, cpu_workspace_of);
  ASSERT_TRUE(wd.has_value()) << wd.status().to_string();
  EXPECT_LE(wd->plan.workspace_pool_bytes, options.workspace_bytes);
  EXPECT_GE(wd->policy.total_time_ms, wr->policy.total_time_ms);
  EXPECT_LE(wd->policy.total_time_ms, undivided->policy.total_time_ms);

  options.workspace_bytes = 0;  // everything must fall back to the workspace-free algorithm
  options.policy = Policy::kWd;
  auto zero = plan_graph(graph, "cpu", options, bench, nullptr, cpu_workspace_of);
  ASSERT_TRUE(zero.has_value()) << zero.status().to_string();
  for (const KernelPlan& kp : zero->policy.kernels) EXPECT_EQ(kp.config.workspace_bytes, 0u);
}

// Two streams (Note [side stream]): the downsample of a ResNet block runs beside
// conv1 and conv2, so under wd with sharing each of those pairs must fit the
// budget together, and the side step's slice lies apart from theirs.
TEST(Planner, SideStreamSlicesFitTheBudgetBesideTheirWindow) {
  onnx_import::ImportOptions import;
  import.batch = 8;
  auto graph = onnx_import::load_model(source_dir() + "/models/tiny/tiny_downsample/model.onnx", import);
  ASSERT_TRUE(graph.has_value()) << graph.status().to_string();
  ASSERT_TRUE(run_inference_passes(*graph).has_value());
  SyntheticBenchmarker bench;
  PlannerOptions options;
  options.progress = false;
  options.policy = Policy::kWd;
  options.share_workspace = true;
  options.workspace_bytes = 6 * 4096;

  auto serial = plan_graph(*graph, "cpu", options, bench, nullptr, cpu_workspace_of);
  ASSERT_TRUE(serial.has_value()) << serial.status().to_string();
  EXPECT_TRUE(serial->side_steps.empty());
  options.streams = 2;
  auto two = plan_graph(*graph, "cpu", options, bench, nullptr, cpu_workspace_of);
  ASSERT_TRUE(two.has_value()) << two.status().to_string();
  ASSERT_EQ(two->side_steps.size(), 1u);
  const ir::NodeId side = two->side_steps[0];
  EXPECT_EQ(graph->nodes[side].name, "downsample");
  EXPECT_EQ(two->plan.steps[side].stream, runtime::kSideStream);
  EXPECT_TRUE(runtime::check_side_streams(*graph, two->plan).is_ok());
  EXPECT_LE(two->plan.workspace_pool_bytes, options.workspace_bytes);
  const runtime::SideWindow window = runtime::side_window(*graph, side);
  int overlapped = 0;
  for (int32_t m = window.fork + 1; m < window.join; ++m) {
    if (graph->nodes[m].op != OpKind::kConv || m == side) continue;
    ++overlapped;
    EXPECT_LE(two->plan.steps[side].workspace_bytes + two->plan.steps[m].workspace_bytes, options.workspace_bytes)
        << graph->nodes[m].name;
  }
  EXPECT_EQ(overlapped, 2);  // conv1 and conv2
  // The pairs constrain the ILP: never faster than one stream at the same budget, never slower than no sharing.
  EXPECT_GE(two->policy.total_time_ms, serial->policy.total_time_ms - 1e-9);
  EXPECT_LE(two->policy.total_time_ms, two->policy.unshared_time_ms + 1e-9);

  // wr bounds each kernel, not the pool: the side slice goes above the window's and the pool grows.
  options.policy = Policy::kWr;
  auto wr = plan_graph(*graph, "cpu", options, bench, nullptr, cpu_workspace_of);
  ASSERT_TRUE(wr.has_value()) << wr.status().to_string();
  ASSERT_EQ(wr->side_steps.size(), 1u);
  EXPECT_TRUE(runtime::check_side_streams(*graph, wr->plan).is_ok());
  EXPECT_GT(wr->plan.workspace_pool_bytes, wr->policy.pool_bytes);
}

TEST(Planner, GoldenPlanFromCheckedInDatabase) {
  const std::string data = source_dir() + "/tests/data";
  const fs::path db_copy = fs::temp_directory_path() / ("planner_test_" + std::to_string(getpid()) + ".sqlite");
  ir::Graph graph = tiny_cnn(8);
  PlannerOptions options;
  options.progress = false;
  options.policy = Policy::kWd;
  options.workspace_bytes = 6 * 4096;
  options.batch_sizes = BatchSizePolicy::kAll;
  SyntheticBenchmarker bench;

  if (update_golden()) {
    fs::remove(data + "/tiny_cnn_bench.sqlite");
    auto db = BenchmarkDb::open(data + "/tiny_cnn_bench.sqlite");
    ASSERT_TRUE(db.has_value());
    ASSERT_TRUE(plan_graph(graph, "cpu", options, bench, &*db, cpu_workspace_of).has_value());
  }
  // The checked-in database has schema version 1: opening the copy converts it
  // (BenchmarkDb), and the plan must come out the same.
  fs::copy_file(data + "/tiny_cnn_bench.sqlite", db_copy, fs::copy_options::overwrite_existing);
  auto db = BenchmarkDb::open(db_copy.string());
  ASSERT_TRUE(db.has_value()) << db.status().to_string();
  bench.fail = true;
  auto result = plan_graph(graph, "cpu", options, bench, &*db, cpu_workspace_of);
  ASSERT_TRUE(result.has_value()) << result.status().to_string();
  EXPECT_EQ(result->kernels_reused, 2);
  EXPECT_EQ(result->kernels_benchmarked, 0);

  const std::string json = runtime::plan_to_json(result->plan, graph);
  const std::string golden_path = data + "/tiny_cnn_plan_wd.golden.json";
  if (update_golden()) std::ofstream(golden_path) << json << "\n";
  std::ifstream in(golden_path);
  std::stringstream golden;
  golden << in.rdbuf();
  // The device name is the synthetic one, so the plan is the same on every machine.
  EXPECT_EQ(json + "\n", golden.str()) << "regenerate with UCUDNN_UPDATE_GOLDEN=1 if the change is intended";
  fs::remove(db_copy);
}

TEST(Planner, PlanJsonRoundTripAndRefusal) {
  ir::Graph graph = tiny_cnn(4);
  SyntheticBenchmarker bench;
  PlannerOptions options;
  options.progress = false;
  options.policy = Policy::kWr;
  auto result = plan_graph(graph, "cpu", options, bench, nullptr, cpu_workspace_of);
  ASSERT_TRUE(result.has_value());
  auto parsed = runtime::plan_from_json(runtime::plan_to_json(result->plan, graph));
  ASSERT_TRUE(parsed.has_value()) << parsed.status().to_string();
  EXPECT_EQ(runtime::plan_to_json(*parsed, graph), runtime::plan_to_json(result->plan, graph));
  EXPECT_TRUE(runtime::check_plan_matches(*parsed, graph, "cpu", "").is_ok());

  ir::Graph other_batch = tiny_cnn(5);
  Status refused = runtime::check_plan_matches(*parsed, other_batch, "cpu", "");
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.message().find("another model or input shape"), std::string::npos);
  EXPECT_FALSE(runtime::check_plan_matches(*parsed, graph, "cuda", "NVIDIA H200").is_ok());

  for (const char* bad : {"", "{", "[]", "{\"format\": \"ucudnn-plan\", \"version\": 99}",
                          "{\"format\": \"ucudnn-plan\", \"version\": 1}"}) {
    auto p = runtime::plan_from_json(bad);
    ASSERT_FALSE(p.has_value()) << bad;
    EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
  }
}

// A plan that divides every convolution into unequal micro-batches with different
// CPU algorithms computes what the default plan computes.
// Runs `graph` undivided and with every Conv cut into micro-batches 3 + 1 + 3
// (three different algorithms); the outputs must agree.
void expect_divided_matches_undivided(const ir::Graph& graph, int expected_divided_steps) {
  auto plain = runtime::make_cpu_plan(graph);
  ASSERT_TRUE(plain.has_value());
  runtime::Plan divided = *plain;
  size_t workspace = 0;
  int divided_steps = 0;
  for (runtime::PlanStep& step : divided.steps) {
    const ir::Node& node = graph.nodes[step.node];
    if (node.op != OpKind::kConv) continue;
    step.micro_batches = {{3, static_cast<int>(cpu::CpuConvAlgorithm::kIm2colGemm)},
                          {1, static_cast<int>(cpu::CpuConvAlgorithm::kDirect)},
                          {3, static_cast<int>(cpu::CpuConvAlgorithm::kIm2colGemmPerSample)}};
    size_t need = 0;
    for (const runtime::MicroBatch& m : step.micro_batches)
      need = std::max(need, runtime::cpu_step_workspace(graph, node, m.size, m.algorithm));
    step.workspace_offset = 0;
    step.workspace_bytes = need;
    workspace = std::max(workspace, need);
    ++divided_steps;
  }
  ASSERT_EQ(divided_steps, expected_divided_steps);
  divided.workspace_pool_bytes = std::max(divided.workspace_pool_bytes, workspace);

  auto a = runtime::CpuExecutor::create(graph, *plain);
  auto b = runtime::CpuExecutor::create(graph, divided);
  ASSERT_TRUE(a.has_value() && b.has_value()) << b.status().to_string();
  const ir::Value& input = graph.value(graph.inputs[0]);
  auto x = Tensor::allocate(DType::kFloat32, input.shape);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (int64_t i = 0; i < x->numel(); ++i) x->data<float>()[i] = dist(rng);
  auto ya = (*a)->run({*x});
  auto yb = (*b)->run({*x});
  ASSERT_TRUE(ya.has_value() && yb.has_value());
  const Tensor& ta = (*ya)[0];
  const Tensor& tb = (*yb)[0];
  ASSERT_EQ(ta.shape(), tb.shape());
  for (int64_t i = 0; i < ta.numel(); ++i) EXPECT_NEAR(ta.data<float>()[i], tb.data<float>()[i], 1e-5) << i;
}

TEST(Planner, DividedPlanMatchesUndividedOnCpu) {
  ir::Graph graph = tiny_cnn(7);
  expect_divided_matches_undivided(graph, 2);

  // The residual block after the passes: its second Conv carries the skip as
  // input z (Note [fused nodes]), which is divided with X and Y.
  onnx_import::ImportOptions options;
  options.batch = 7;
  auto residual = onnx_import::load_model(source_dir() + "/models/tiny/tiny_residual/model.onnx", options);
  ASSERT_TRUE(residual.has_value()) << residual.status().to_string();
  auto passes = run_inference_passes(*residual);
  ASSERT_TRUE(passes.has_value() && passes->residuals_fused == 1);
  expect_divided_matches_undivided(*residual, 2);
}

// A micro-batch that does not fit its workspace slice is refused at load, not at run.
TEST(Planner, StarvedMicroBatchIsRefusedAtLoad) {
  ir::Graph graph = tiny_cnn(7);
  auto plan = runtime::make_cpu_plan(graph);
  ASSERT_TRUE(plan.has_value());
  for (runtime::PlanStep& step : plan->steps) {
    if (graph.nodes[step.node].op != OpKind::kConv) continue;
    step.micro_batches = {{3, static_cast<int>(cpu::CpuConvAlgorithm::kIm2colGemm)},
                          {4, static_cast<int>(cpu::CpuConvAlgorithm::kIm2colGemm)}};
    step.workspace_bytes = 0;
  }
  auto refused = runtime::CpuExecutor::create(graph, *plan);
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.status().message().find("workspace"), std::string::npos);
}

}  // namespace
}  // namespace ucudnn::optimizer
