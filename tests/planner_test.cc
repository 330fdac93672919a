// Tests of the planner on a real (tiny) model: the pure part (plan_from_timings)
// on timings written here, with the plan written out by hand beside it; the
// gathering part (gather_timings) with a synthetic benchmarker and a database;
// every policy under an unlimited workspace; a golden plan from a checked-in
// database; plan JSON round trip and refusal; and on the CPU, that a divided
// plan computes what the undivided one does and that a starved one is refused.
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
#include "optimizer/plan_model.h"
#include "optimizer/planner.h"
#include "runtime/cpu/conv_algorithms.h"
#include "runtime/cpu/cpu_backend.h"
#include "runtime/executor/executor.h"
#include "runtime/plan/plan_json.h"
#include "runtime/plan/side_stream.h"
#include "tests/support/backend_runner.h"
#include "tests/support/temp_dir.h"
#include "tests/test_paths.h"

namespace ucudnn::optimizer {
namespace {

namespace fs = std::filesystem;

using ucudnn_test::source_dir;
bool update_golden() { return std::getenv("UCUDNN_UPDATE_GOLDEN") != nullptr; }

ir::Graph tiny_model(const std::string& name, int64_t batch) {
  onnx_import::ImportOptions options;
  options.batch = batch;
  auto graph = onnx_import::load_model(source_dir() + "/models/tiny/" + name + "/model.onnx", options);
  EXPECT_TRUE(graph.has_value()) << graph.status().to_string();
  return std::move(*graph);
}
ir::Graph tiny_cnn(int64_t batch) { return tiny_model("tiny_cnn", batch); }

ir::NodeId node_named(const ir::Graph& graph, const std::string& name) {
  for (size_t n = 0; n < graph.nodes.size(); ++n)
    if (graph.nodes[n].name == name) return static_cast<ir::NodeId>(n);
  ADD_FAILURE() << "no node '" << name << "'";
  return 0;
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

// gather_timings (no database) and plan_from_timings, as plan_model runs them.
Expected<PlanResult> plan_with(const ir::Graph& graph, const PlannerOptions& options, Benchmarker& bench,
                               BenchmarkDb* db = nullptr) {
  UCUDNN_ASSIGN_OR_RETURN(GraphTimings timings,
                          gather_timings(graph, options.batch_sizes, bench, db, /*rebenchmark=*/false, false));
  return plan_from_timings(graph, "cpu", options, std::move(timings));
}

// --- The pure part on timings written by hand ------------------------------------------------

// tiny_cnn at batch 8 has two convolutions. Per micro-batch size b (1, 2, 4, 8):
//   conv1: algorithm 0 takes 0.125·b + 0.0625 ms with 1000·b bytes; algorithm 1 takes 0.5·b ms with none
//   conv2: algorithm 0 takes 0.25·b + 0.0625 ms with 3000·b bytes; algorithm 1 takes 0.75·b ms with none
// (binary fractions, so every sum below is exact).
GraphTimings hand_written_timings(const ir::Graph& graph) {
  ConvKernelKey device;
  device.device_name = "hand-written";
  auto kernels = collect_conv_kernels(graph, device);
  EXPECT_TRUE(kernels.has_value() && kernels->size() == 2u);
  GraphTimings timings;
  timings.device_name = "hand-written";
  timings.kernels = *kernels;
  struct Line {
    double per_sample, overhead;
    size_t bytes_per_sample;
    double slow_per_sample;
  };
  const Line lines[] = {{0.125, 0.0625, 1000, 0.5}, {0.25, 0.0625, 3000, 0.75}};
  for (size_t k = 0; k < 2; ++k) {
    KernelTimings t;
    for (int64_t b : {1, 2, 4, 8}) {
      const double n = static_cast<double>(b);
      t.by_batch[b] = {{0, "fast", lines[k].per_sample * n + lines[k].overhead, lines[k].bytes_per_sample * b, true},
                       {1, "slow", lines[k].slow_per_sample * n, 0, true}};
    }
    timings.timings.push_back({graph.nodes[timings.kernels[k].nodes[0]].name, t, 1});
  }
  return timings;
}

struct ExpectedConvStep {
  const char* node;
  std::vector<runtime::MicroBatch> micro_batches;
  size_t workspace_offset, workspace_bytes;
};

void expect_conv_steps(const ir::Graph& graph, const runtime::Plan& plan, const std::vector<ExpectedConvStep>& steps) {
  for (const ExpectedConvStep& e : steps) {
    SCOPED_TRACE(e.node);
    const runtime::PlanStep& step = plan.steps[node_named(graph, e.node)];
    EXPECT_EQ(step.micro_batches, e.micro_batches);
    EXPECT_EQ(step.workspace_offset, e.workspace_offset);
    EXPECT_EQ(step.workspace_bytes, e.workspace_bytes);
  }
}

TEST(PlanFromTimings, WrOnHandWrittenTimings) {
  const ir::Graph graph = tiny_cnn(8);
  PlannerOptions options;
  options.policy = Policy::kWr;
  options.workspace_bytes = 4000;
  auto result = plan_from_timings(graph, "cpu", options, hand_written_timings(graph));
  ASSERT_TRUE(result.has_value()) << result.status().to_string();
  // conv1: algorithm 0 fits 4 samples (4000 B): 4 + 4 at 0.5625 ms each beats algorithm 1 at 8 (4 ms).
  // conv2: algorithm 0 fits 1 sample (3000 B): 8 × 0.3125 ms beats algorithm 1 at 8 (6 ms).
  expect_conv_steps(graph, result->plan,
                    {{"conv1", {{4, 0}, {4, 0}}, 0, 4000}, {"conv2", std::vector<runtime::MicroBatch>(8, {1, 0}), 0, 3000}});
  const runtime::Plan& plan = result->plan;
  EXPECT_EQ(plan.device, "cpu");
  EXPECT_EQ(plan.device_name, "hand-written");
  EXPECT_EQ(plan.policy, "wr");
  EXPECT_EQ(plan.layout, "nchw");
  EXPECT_EQ(plan.predicted_conv_ms, 1.125 + 2.5);
  EXPECT_EQ(plan.workspace_pool_bytes, 4000u);  // the kernels take turns in one pool
  for (const runtime::PlanStep& step : plan.steps)
    if (graph.nodes[step.node].op != OpKind::kConv) {
      EXPECT_TRUE(step.micro_batches.empty());
    }
  EXPECT_EQ(plan.model_fingerprint, runtime::graph_fingerprint(graph));
  EXPECT_GT(plan.arena_bytes, 0u);
}

TEST(PlanFromTimings, WdOnHandWrittenTimings) {
  const ir::Graph graph = tiny_cnn(8);
  PlannerOptions options;
  options.policy = Policy::kWd;
  options.workspace_bytes = 7000;
  auto result = plan_from_timings(graph, "cuda", options, hand_written_timings(graph));
  ASSERT_TRUE(result.has_value()) << result.status().to_string();
  // Slices are rounded up to 256 B. conv1 at 4 + 4 (4096 B) beside conv2 at 8 × 1 (3072 B) is 7168 B: over.
  // The best that fits: conv1 at 4 × 2 (2048 B, 1.25 ms) and conv2 at 8 × 1 (3072 B, 2.5 ms), one after the other.
  expect_conv_steps(graph, result->plan,
                    {{"conv1", {{2, 0}, {2, 0}, {2, 0}, {2, 0}}, 0, 2048},
                     {"conv2", std::vector<runtime::MicroBatch>(8, {1, 0}), 2048, 3072}});
  EXPECT_EQ(result->plan.device, "cuda");
  EXPECT_EQ(result->plan.predicted_conv_ms, 1.25 + 2.5);
  EXPECT_EQ(result->plan.workspace_pool_bytes, 2048u + 3072u);
  // On CUDA no other step takes workspace (see planner.h).
  for (const runtime::PlanStep& step : result->plan.steps)
    if (graph.nodes[step.node].op != OpKind::kConv) {
      EXPECT_EQ(step.workspace_bytes, 0u);
    }
}

// An unlimited workspace (SIZE_MAX) gives every policy each kernel's fastest configuration:
// conv1 undivided at 8 with algorithm 0 (1.0625 ms), conv2 likewise (2.0625 ms).
TEST(PlanFromTimings, UnlimitedWorkspaceUnderEveryPolicy) {
  const ir::Graph graph = tiny_cnn(8);
  for (Policy policy : {Policy::kUndivided, Policy::kWr, Policy::kWd}) {
    SCOPED_TRACE(policy_name(policy));
    PlannerOptions options;
    options.policy = policy;
    options.workspace_bytes = kUnlimitedWorkspace;
    auto result = plan_from_timings(graph, "cpu", options, hand_written_timings(graph));
    ASSERT_TRUE(result.has_value()) << result.status().to_string();
    EXPECT_EQ(result->plan.predicted_conv_ms, 1.0625 + 2.0625);
    const bool wd = policy == Policy::kWd;
    expect_conv_steps(graph, result->plan,
                      {{"conv1", {{8, 0}}, 0, wd ? 8192u : 8000u}, {"conv2", {{8, 0}}, wd ? 8192u : 0u, wd ? 24064u : 24000u}});
    if (wd) {
      EXPECT_EQ(result->policy.ilp.status, "optimal");  // the budget does not bind: no ILP solved
    }
  }
}

TEST(PlanFromTimings, RefusesTimingsOfAnotherGraph) {
  const ir::Graph graph = tiny_cnn(8);
  PlannerOptions options;
  GraphTimings missing = hand_written_timings(graph);
  missing.kernels.pop_back();
  missing.timings.pop_back();
  auto refused = plan_from_timings(graph, "cpu", options, missing);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("conv2"), std::string::npos) << refused.status().message();

  GraphTimings not_a_conv = hand_written_timings(graph);
  not_a_conv.kernels[0].nodes = {node_named(graph, "relu1")};
  refused = plan_from_timings(graph, "cpu", options, not_a_conv);
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.status().message().find("not a Conv"), std::string::npos) << refused.status().message();

  GraphTimings unequal = hand_written_timings(graph);
  unequal.timings.pop_back();
  EXPECT_EQ(plan_from_timings(graph, "cpu", options, unequal).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(plan_from_timings(graph, "tpu", options, hand_written_timings(graph)).status().code(),
            StatusCode::kInvalidArgument);
}

// --- Gathering timings, and both parts together -----------------------------------------------

TEST(Planner, PoliciesOnTinyCnn) {
  ir::Graph graph = tiny_cnn(8);
  SyntheticBenchmarker bench;
  PlannerOptions options;
  options.workspace_bytes = 4 * 4096;  // the fast algorithm fits micro-batches of ≤ 4

  options.policy = Policy::kUndivided;
  auto undivided = plan_with(graph, options, bench);
  ASSERT_TRUE(undivided.has_value()) << undivided.status().to_string();
  ASSERT_EQ(undivided->kernels.size(), 2u);
  EXPECT_EQ(bench.calls, 2);
  EXPECT_EQ(undivided->kernels_benchmarked, 2);
  EXPECT_EQ(undivided->plan.device_name, "test-device");

  options.policy = Policy::kWr;
  auto wr = plan_with(graph, options, bench);
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
  auto wd = plan_with(graph, options, bench);
  ASSERT_TRUE(wd.has_value()) << wd.status().to_string();
  EXPECT_LE(wd->plan.workspace_pool_bytes, options.workspace_bytes);
  EXPECT_GE(wd->policy.total_time_ms, wr->policy.total_time_ms);
  EXPECT_LE(wd->policy.total_time_ms, undivided->policy.total_time_ms);

  options.workspace_bytes = 0;  // everything must fall back to the workspace-free algorithm
  options.policy = Policy::kWd;
  auto zero = plan_with(graph, options, bench);
  ASSERT_TRUE(zero.has_value()) << zero.status().to_string();
  for (const KernelPlan& kp : zero->policy.kernels) EXPECT_EQ(kp.config.workspace_bytes, 0u);
}

// Two streams (Note [side stream]): the downsample of a ResNet block runs beside
// conv1 and conv2, so under wd with sharing each of those pairs must fit the
// budget together, and the side step's slice lies apart from theirs.
TEST(Planner, SideStreamSlicesFitTheBudgetBesideTheirWindow) {
  ir::Graph graph = tiny_model("tiny_downsample", 8);
  ASSERT_TRUE(run_inference_passes(graph).has_value());
  SyntheticBenchmarker bench;
  PlannerOptions options;
  options.policy = Policy::kWd;
  options.share_workspace = true;
  options.workspace_bytes = 6 * 4096;

  auto serial = plan_with(graph, options, bench);
  ASSERT_TRUE(serial.has_value()) << serial.status().to_string();
  EXPECT_TRUE(serial->side_steps.empty());
  options.streams = 2;
  auto two = plan_with(graph, options, bench);
  ASSERT_TRUE(two.has_value()) << two.status().to_string();
  ASSERT_EQ(two->side_steps.size(), 1u);
  const ir::NodeId side = two->side_steps[0];
  EXPECT_EQ(graph.nodes[side].name, "downsample");
  EXPECT_EQ(two->plan.steps[side].stream, runtime::kSideStream);
  EXPECT_TRUE(runtime::check_side_streams(graph, two->plan).is_ok());
  EXPECT_LE(two->plan.workspace_pool_bytes, options.workspace_bytes);
  const runtime::SideWindow window = runtime::side_window(graph, side);
  int overlapped = 0;
  for (int32_t m = window.fork + 1; m < window.join; ++m) {
    if (graph.nodes[m].op != OpKind::kConv || m == side) continue;
    ++overlapped;
    EXPECT_LE(two->plan.steps[side].workspace_bytes + two->plan.steps[m].workspace_bytes, options.workspace_bytes)
        << graph.nodes[m].name;
  }
  EXPECT_EQ(overlapped, 2);  // conv1 and conv2
  // The pairs constrain the ILP: never faster than one stream at the same budget, never slower than no sharing.
  EXPECT_GE(two->policy.total_time_ms, serial->policy.total_time_ms - 1e-9);
  EXPECT_LE(two->policy.total_time_ms, two->policy.unshared_time_ms + 1e-9);

  // wr bounds each kernel, not the pool: the side slice goes above the window's and the pool grows.
  options.policy = Policy::kWr;
  options.share_workspace = false;
  auto wr = plan_with(graph, options, bench);
  ASSERT_TRUE(wr.has_value()) << wr.status().to_string();
  ASSERT_EQ(wr->side_steps.size(), 1u);
  EXPECT_TRUE(runtime::check_side_streams(graph, wr->plan).is_ok());
  EXPECT_GT(wr->plan.workspace_pool_bytes, wr->policy.pool_bytes);
}

// The golden plan of tiny_cnn under wd from tests/data/tiny_cnn_bench.sqlite.
void expect_golden_plan(const ir::Graph& graph, const PlanResult& result) {
  const std::string json = runtime::plan_to_json(result.plan, graph);
  const std::string golden_path = source_dir() + "/tests/data/tiny_cnn_plan_wd.golden.json";
  if (update_golden()) std::ofstream(golden_path) << json << "\n";
  std::ifstream in(golden_path);
  std::stringstream golden;
  golden << in.rdbuf();
  // The device name is the synthetic one, so the plan is the same on every machine.
  EXPECT_EQ(json + "\n", golden.str()) << "regenerate with UCUDNN_UPDATE_GOLDEN=1 if the change is intended";
}

PlannerOptions golden_options() {
  PlannerOptions options;
  options.policy = Policy::kWd;
  options.workspace_bytes = 6 * 4096;
  options.batch_sizes = BatchSizePolicy::kAll;
  return options;
}

TEST(Planner, GoldenPlanFromCheckedInDatabase) {
  const std::string data = source_dir() + "/tests/data";
  const ucudnn_test::TempDir dir("ucudnn_planner_test");
  const fs::path db_copy = dir.path() / "tiny_cnn_bench.sqlite";
  ir::Graph graph = tiny_cnn(8);
  const PlannerOptions options = golden_options();
  SyntheticBenchmarker bench;

  if (update_golden()) {
    fs::remove(data + "/tiny_cnn_bench.sqlite");
    auto db = BenchmarkDb::open(data + "/tiny_cnn_bench.sqlite");
    ASSERT_TRUE(db.has_value());
    ASSERT_TRUE(plan_with(graph, options, bench, &*db).has_value());
  }
  // The checked-in database has schema version 1: opening the copy for writing
  // converts it (BenchmarkDb), and the plan must come out the same.
  fs::copy_file(data + "/tiny_cnn_bench.sqlite", db_copy, fs::copy_options::overwrite_existing);
  auto db = BenchmarkDb::open(db_copy.string());
  ASSERT_TRUE(db.has_value()) << db.status().to_string();
  bench.fail = true;
  auto result = plan_with(graph, options, bench, &*db);
  ASSERT_TRUE(result.has_value()) << result.status().to_string();
  EXPECT_EQ(result->kernels_reused, 2);
  EXPECT_EQ(result->kernels_benchmarked, 0);
  expect_golden_plan(graph, *result);
}

// Read-only, the checked-in version-1 file gives the same plan and is not converted:
// its bytes and the names in tests/data stay as they are.
TEST(Planner, GoldenPlanFromCheckedInDatabaseReadOnly) {
  const std::string data = source_dir() + "/tests/data";
  const std::string path = data + "/tiny_cnn_bench.sqlite";
  auto contents = [&] {
    std::ifstream in(path, std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    std::string names;
    for (const fs::directory_entry& entry : fs::directory_iterator(data)) names += entry.path().filename().string() + " ";
    return bytes.str() + names;
  };
  const std::string before = contents();
  ir::Graph graph = tiny_cnn(8);
  SyntheticBenchmarker bench;
  bench.fail = true;
  {
    auto db = BenchmarkDb::open_read_only(path);
    ASSERT_TRUE(db.has_value()) << db.status().to_string();
    auto result = plan_with(graph, golden_options(), bench, &*db);
    ASSERT_TRUE(result.has_value()) << result.status().to_string();
    EXPECT_EQ(result->kernels_reused, 2);
    expect_golden_plan(graph, *result);
  }
  EXPECT_EQ(contents(), before) << "reading tests/data/tiny_cnn_bench.sqlite changed it or its folder";
}

// A graph without convolutions is planned without a database: plan_model is
// pointed at a path where none can be created, and succeeds.
TEST(Planner, GraphWithoutConvolutionsOpensNoDatabase) {
  ir::Graph graph = tiny_model("tiny_reshape", 2);
  for (const ir::Node& node : graph.nodes) ASSERT_NE(node.op, OpKind::kConv);
  PlanRequest request;
  request.db_path = "/proc/ucudnn-no-such-dir/benchmarks.sqlite";
  request.progress = false;
  auto planned = plan_model(graph, request);
  ASSERT_TRUE(planned.has_value()) << planned.status().to_string();
  EXPECT_EQ(planned->result.plan.policy, "wr");
  EXPECT_EQ(planned->result.plan.steps.size(), graph.nodes.size());
  EXPECT_FALSE(fs::exists(request.db_path));

  // The same request on a model with convolutions needs the database, and says where it failed.
  auto refused = plan_model(tiny_cnn(2), request);
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.status().message().find("/proc/ucudnn-no-such-dir"), std::string::npos)
      << refused.status().to_string();
}

TEST(Planner, PlanJsonRoundTripAndRefusal) {
  ir::Graph graph = tiny_cnn(4);
  SyntheticBenchmarker bench;
  PlannerOptions options;
  options.policy = Policy::kWr;
  auto result = plan_with(graph, options, bench);
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

// --- Plans on the CPU executor ----------------------------------------------------------------


Expected<std::vector<Tensor>> run_on_cpu(const ir::Graph& graph, runtime::Plan plan, const std::vector<Tensor>& x) {
  const std::unique_ptr<runtime::Backend> backend = cpu::make_cpu_backend();
  UCUDNN_ASSIGN_OR_RETURN(auto executor, runtime::Executor::create(*backend, graph, std::move(plan)));
  return executor->run(x);
}

// Runs `graph` undivided and with every Conv cut into micro-batches 3 + 1 + 3
// (three different algorithms); the outputs must agree.
void expect_divided_matches_undivided(const ir::Graph& graph, int expected_divided_steps) {
  const runtime::Plan plain = ucudnn_test::whole_steps_cpu_plan(graph);
  runtime::Plan divided = plain;
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
      need = std::max(need, cpu::cpu_step_workspace(graph, node, m.size, m.algorithm));
    step.workspace_offset = 0;
    step.workspace_bytes = need;
    workspace = std::max(workspace, need);
    ++divided_steps;
  }
  ASSERT_EQ(divided_steps, expected_divided_steps);
  divided.workspace_pool_bytes = std::max(divided.workspace_pool_bytes, workspace);

  const ir::Value& input = graph.value(graph.inputs[0]);
  auto x = Tensor::allocate(DType::kFloat32, input.shape);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (int64_t i = 0; i < x->numel(); ++i) x->data<float>()[i] = dist(rng);
  auto ya = run_on_cpu(graph, plain, {*x});
  auto yb = run_on_cpu(graph, divided, {*x});
  ASSERT_TRUE(ya.has_value()) << ya.status().to_string();
  ASSERT_TRUE(yb.has_value()) << yb.status().to_string();
  const Tensor& ta = (*ya)[0];
  const Tensor& tb = (*yb)[0];
  ASSERT_EQ(ta.shape(), tb.shape());
  for (int64_t i = 0; i < ta.numel(); ++i) EXPECT_NEAR(ta.data<float>()[i], tb.data<float>()[i], 1e-5) << i;
}

TEST(Planner, DividedPlanMatchesUndividedOnCpu) {
  expect_divided_matches_undivided(tiny_cnn(7), 2);

  // The residual block after the passes: its second Conv carries the skip as
  // input z (Note [fused nodes]), which is divided with X and Y.
  ir::Graph residual = tiny_model("tiny_residual", 7);
  auto passes = run_inference_passes(residual);
  ASSERT_TRUE(passes.has_value() && passes->residuals_fused == 1);
  expect_divided_matches_undivided(residual, 2);
}

// A micro-batch that does not fit its workspace slice is refused at load, not at run.
TEST(Planner, StarvedMicroBatchIsRefusedAtLoad) {
  ir::Graph graph = tiny_cnn(7);
  runtime::Plan plan = ucudnn_test::whole_steps_cpu_plan(graph);
  for (runtime::PlanStep& step : plan.steps) {
    if (graph.nodes[step.node].op != OpKind::kConv) continue;
    step.micro_batches = {{3, static_cast<int>(cpu::CpuConvAlgorithm::kIm2colGemm)},
                          {4, static_cast<int>(cpu::CpuConvAlgorithm::kIm2colGemm)}};
    step.workspace_bytes = 0;
  }
  const std::unique_ptr<runtime::Backend> backend = cpu::make_cpu_backend();
  auto refused = runtime::Executor::create(*backend, graph, plan);
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.status().message().find("workspace"), std::string::npos) << refused.status().message();
}

}  // namespace
}  // namespace ucudnn::optimizer
