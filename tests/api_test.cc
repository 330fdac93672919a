// The public API (include/ucudnn/ucudnn.h) on the CPU: check_options' errors,
// the default plan coming from the optimizer (policy wr) and equal to what
// plan() makes, an unlimited workspace under every policy, the report's
// "undivided" being what Policy::kUndivided runs, saved plans, a model without
// convolutions planned without a database, the CPU's refusals, and pinned threads.
#include <gtest/gtest.h>

#include <sched.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <random>

#include <nlohmann/json.hpp>

#include "api/loading.h"
#include "runtime/plan/plan_json.h"
#include "tests/support/tensor_checks.h"
#include "tests/test_paths.h"
#include "ucudnn/ucudnn.h"

namespace ucudnn {
namespace {

namespace fs = std::filesystem;
using ucudnn_test::source_dir;

std::string tiny(const std::string& name) { return source_dir() + "/models/tiny/" + name + "/model.onnx"; }

// A directory of this test process for databases and plan files, removed at exit.
fs::path scratch_dir() { return fs::temp_directory_path() / ("ucudnn_api_test_" + std::to_string(::getpid())); }
std::string scratch(const std::string& name) {
  fs::create_directories(scratch_dir());
  return (scratch_dir() / name).string();
}
class RemoveScratch : public ::testing::Environment {
  void TearDown() override { fs::remove_all(scratch_dir()); }
};
const auto* const kRemoveScratch = ::testing::AddGlobalTestEnvironment(new RemoveScratch);

// CPU options on their own database, quiet.
SessionOptions cpu_options(int64_t batch, const std::string& db_name) {
  SessionOptions options;
  options.batch = batch;
  options.threads = 1;
  options.benchmark_db = scratch(db_name);
  options.progress = false;
  return options;
}

std::vector<Tensor> random_inputs(const Session& session) {
  std::mt19937 rng(7);
  std::vector<Tensor> inputs;
  for (const TensorInfo& info : session.inputs())
    inputs.push_back(ucudnn_test::make_random_tensor(info.dtype, info.shape, rng));
  return inputs;
}

std::unique_ptr<Session> load_ok(const std::string& model, const SessionOptions& options) {
  auto session = Session::load(model, options);
  EXPECT_TRUE(session.has_value()) << session.status().to_string();
  return session ? std::move(*session) : nullptr;
}

TEST(CheckOptions, NamesTheOptionAndItsValue) {
  struct Case {
    const char* name;
    std::function<void(SessionOptions&)> change;
    const char* error;
  };
  const std::vector<Case> cases = {
      {"batch", [](SessionOptions& o) { o.batch = 0; }, "batch must be at least 1, got 0"},
      {"threads", [](SessionOptions& o) { o.threads = -2; }, "threads must be 0 (all cores) or positive, got -2"},
      {"streams", [](SessionOptions& o) { o.streams = 3; }, "streams must be 1 or 2, got 3"},
      {"pinning off the CPU",
       [](SessionOptions& o) {
         o.device = Device::kCuda;
         o.pin_threads = true;
       },
       "pin_threads pins the CPU's threads; this session runs on the cuda"},
      {"sharing without wd", [](SessionOptions& o) { o.share_workspace = true; },
       "share_workspace applies to policy wd (one budget divided among the convolutions), not to policy wr"},
      {"policy out of range", [](SessionOptions& o) { o.policy = static_cast<Policy>(7); },
       "policy holds 7, which is none of its enum's values"},
      {"math out of range", [](SessionOptions& o) { o.math = static_cast<Math>(-1); }, "math holds -1"},
      {"batch sizes out of range", [](SessionOptions& o) { o.batch_sizes = static_cast<BatchSizes>(3); },
       "batch_sizes holds 3"},
      {"device out of range", [](SessionOptions& o) { o.device = static_cast<Device>(2); }, "device holds 2"},
      {"layout out of range", [](SessionOptions& o) { o.layout = static_cast<Layout>(9); }, "layout holds 9"},
  };
  EXPECT_TRUE(check_options(SessionOptions{}).is_ok());
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    SessionOptions options;
    c.change(options);
    const Status status = check_options(options);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(status.message().find(c.error), std::string::npos) << status.to_string();
    // Session::load and plan() refuse them the same way, before looking at the model.
    auto session = Session::load("/no/such/model.onnx", options);
    ASSERT_FALSE(session.has_value());
    EXPECT_EQ(session.status().to_string(), status.to_string());
    auto planned = plan("/no/such/model.onnx", options);
    ASSERT_FALSE(planned.has_value());
    EXPECT_EQ(planned.status().to_string(), status.to_string());
  }
  // With options in order, the missing model is what fails.
  auto missing = Session::load("/no/such/model.onnx", cpu_options(1, "missing.sqlite"));
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.status().message().find("/no/such/model.onnx"), std::string::npos) << missing.status().to_string();
}

// Without a policy given, a session runs the optimizer's wr plan, the very plan plan() makes.
TEST(DefaultPlan, IsTheOptimizersWrAndEqualsPlan) {
  SessionOptions options = cpu_options(8, "default.sqlite");
  // One layout: the CPU's auto layout is chosen by timed runs (Note [the CPU's layout is measured]),
  // which two plans of a model this small may decide differently.
  options.layout = Layout::kNchw;
  EXPECT_EQ(options.policy, Policy::kWr);
  EXPECT_EQ(options.kernel_workspace_limit, size_t{64} << 20);
  auto session = load_ok(tiny("tiny_cnn"), options);
  ASSERT_TRUE(session);
  const nlohmann::json plan_json = nlohmann::json::parse(session->plan_json());
  EXPECT_EQ(plan_json["policy"], "wr");
  EXPECT_EQ(plan_json["device"], "cpu");
  EXPECT_GT(plan_json["predicted_conv_ms"].get<double>(), 0.0) << "the convolutions were timed";

  // The session stored its timings: plan() reuses them and arrives at the same plan.
  auto planned = plan(tiny("tiny_cnn"), options);
  ASSERT_TRUE(planned.has_value()) << planned.status().to_string();
  EXPECT_EQ(planned->summary().kernels_benchmarked, 0);
  EXPECT_EQ(planned->summary().kernels_reused, 2);
  EXPECT_EQ(planned->summary().policy, Policy::kWr);
  EXPECT_EQ(planned->to_json(), session->plan_json());

  auto outputs = session->run(random_inputs(*session));
  ASSERT_TRUE(outputs.has_value()) << outputs.status().to_string();
  EXPECT_EQ((*outputs)[0].shape(), (Shape{8, 5}));
}

// --workspace unlimited: every policy plans and the session runs, computing what the default does.
TEST(UnlimitedWorkspace, EveryPolicyPlansAndRunsOnTheCpu) {
  SessionOptions base = cpu_options(4, "unlimited.sqlite");
  auto reference = load_ok(tiny("tiny_cnn"), base);
  ASSERT_TRUE(reference);
  const std::vector<Tensor> inputs = random_inputs(*reference);
  auto expected = reference->run(inputs);
  ASSERT_TRUE(expected.has_value()) << expected.status().to_string();
  for (Policy policy : {Policy::kUndivided, Policy::kWr, Policy::kWd}) {
    SCOPED_TRACE(policy_name(policy));
    SessionOptions options = base;
    options.policy = policy;
    options.kernel_workspace_limit = kUnlimitedWorkspace;
    options.total_workspace_budget = kUnlimitedWorkspace;
    auto session = load_ok(tiny("tiny_cnn"), options);
    ASSERT_TRUE(session);
    EXPECT_EQ(nlohmann::json::parse(session->plan_json())["policy"], policy_name(policy));
    auto outputs = session->run(inputs);
    ASSERT_TRUE(outputs.has_value()) << outputs.status().to_string();
    const Tensor& y = (*outputs)[0];
    const Tensor& e = (*expected)[0];
    ASSERT_EQ(y.shape(), e.shape());
    for (int64_t i = 0; i < y.numel(); ++i)
      EXPECT_NEAR(y.data<float>()[i], e.data<float>()[i], 1e-4 * (1 + std::abs(e.data<float>()[i]))) << i;

    auto planned = plan(tiny("tiny_cnn"), options);
    ASSERT_TRUE(planned.has_value()) << planned.status().to_string();
    EXPECT_NE(planned->report_text().find("unlimited (benchmarked with the free host memory)"), std::string::npos)
        << planned->report_text();
  }
}

// The report's "undivided" total under wr is exactly the predicted time of Policy::kUndivided
// at the same limit: the same timings through the same function.
TEST(Report, UndividedIsWhatPolicyUndividedRuns) {
  for (size_t limit : {size_t{0}, size_t{4} << 10, kUnlimitedWorkspace}) {
    SCOPED_TRACE(limit);
    SessionOptions options = cpu_options(8, "undivided.sqlite");
    options.kernel_workspace_limit = limit;
    options.layout = Layout::kNchw;  // both plans in one layout (the auto one is measured, run by run)
    auto wr = plan(tiny("tiny_branches"), options);
    ASSERT_TRUE(wr.has_value()) << wr.status().to_string();
    options.policy = Policy::kUndivided;
    auto undivided = plan(tiny("tiny_branches"), options);
    ASSERT_TRUE(undivided.has_value()) << undivided.status().to_string();
    const nlohmann::json report = nlohmann::json::parse(wr->report_json());
    EXPECT_EQ(report["totals"]["undivided_ms"].get<double>(), undivided->summary().predicted_conv_ms);
    EXPECT_EQ(report["policy"], "wr");
  }
}

TEST(SavedPlan, RunsAsSavedAndIsCheckedAgainstTheModel) {
  SessionOptions options = cpu_options(4, "saved.sqlite");
  options.policy = Policy::kWd;
  options.total_workspace_budget = 16 << 10;
  auto planned = plan(tiny("tiny_cnn"), options);
  ASSERT_TRUE(planned.has_value()) << planned.status().to_string();
  EXPECT_EQ(planned->summary().policy, Policy::kWd);
  EXPECT_EQ(planned->summary().device, "cpu");
  EXPECT_EQ(planned->summary().convolution_kernels, 2);
  const std::string path = scratch("wd.plan.json");
  ASSERT_TRUE(save_plan(*planned, path).is_ok());

  SessionOptions run_options;  // the saved plan fixes policy and workspace
  run_options.batch = 4;
  // oneDNN sizes its scratchpad for the thread count: a CPU plan runs with the threads it was made for.
  run_options.threads = options.threads;
  run_options.plan_path = path;
  auto session = load_ok(tiny("tiny_cnn"), run_options);
  ASSERT_TRUE(session);
  EXPECT_EQ(session->plan_json(), planned->to_json());

  run_options.batch = 5;
  auto other_batch = Session::load(tiny("tiny_cnn"), run_options);
  ASSERT_FALSE(other_batch.has_value());
  EXPECT_NE(other_batch.status().message().find(path), std::string::npos) << other_batch.status().to_string();
  EXPECT_NE(other_batch.status().message().find("another model or input shape"), std::string::npos);

  run_options.batch = 4;
  run_options.threads = 2;  // the plan was made for one thread: its oneDNN workspaces may not fit
  auto other_threads = Session::load(tiny("tiny_cnn"), run_options);
  ASSERT_FALSE(other_threads.has_value());
  EXPECT_NE(other_threads.status().message().find("x1 threads"), std::string::npos)
      << other_threads.status().to_string();
  EXPECT_NE(other_threads.status().message().find("--threads"), std::string::npos);

  auto refused = plan(tiny("tiny_cnn"), run_options);
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.status().message().find("plan_path"), std::string::npos) << refused.status().to_string();
}

// A plan for another processor names both; the CPU has no device name, so it reads
// "not for cpu", never "not cpu ''".
TEST(SavedPlan, AnotherDeviceIsNamedReadably) {
  SessionOptions options = cpu_options(2, "device.sqlite");
  auto graph = load_inference_graph(tiny("tiny_cnn"), options);
  ASSERT_TRUE(graph.has_value()) << graph.status().to_string();
  runtime::Plan gpu_plan;
  gpu_plan.model_fingerprint = runtime::graph_fingerprint(*graph);
  gpu_plan.device = "cuda";
  gpu_plan.device_name = "NVIDIA H200";
  const Status on_cpu = runtime::check_plan_matches(gpu_plan, *graph, "cpu", "");
  EXPECT_NE(on_cpu.message().find("the plan was made for cuda 'NVIDIA H200', not for cpu; make it again with "
                                  "`ucudnn plan --device cpu`"),
            std::string::npos)
      << on_cpu.message();
  EXPECT_EQ(on_cpu.message().find("''"), std::string::npos) << on_cpu.message();
  const Status other_gpu = runtime::check_plan_matches(gpu_plan, *graph, "cuda", "NVIDIA A100");
  EXPECT_NE(other_gpu.message().find("made for cuda 'NVIDIA H200', not for cuda 'NVIDIA A100'"), std::string::npos)
      << other_gpu.message();
  runtime::Plan cpu_plan = gpu_plan;
  cpu_plan.device = "cpu";
  cpu_plan.device_name = "";
  EXPECT_TRUE(runtime::check_plan_matches(cpu_plan, *graph, "cpu", "").is_ok());
}

// Session::run takes exactly the declared inputs: another shape or dtype is refused,
// naming the input (the executor's check_run_inputs).
TEST(CpuSession, RunRefusesInputsOfAnotherShapeOrDtype) {
  auto session = load_ok(tiny("tiny_cnn"), cpu_options(2, "inputs.sqlite"));
  ASSERT_TRUE(session);
  std::mt19937 rng(3);
  for (const auto& [dtype, shape] : std::vector<std::pair<DType, Shape>>{
           {DType::kFloat32, {1, 3, 8, 8}}, {DType::kFloat32, {2, 4, 8, 8}}, {DType::kFloat32, {2, 3, 9, 9}},
           {DType::kInt64, {2, 3, 8, 8}}}) {
    SCOPED_TRACE(std::string(dtype_name(dtype)) + shape_to_string(shape));
    auto outputs = session->run({ucudnn_test::make_random_tensor(dtype, shape, rng)});
    ASSERT_FALSE(outputs.has_value());
    EXPECT_EQ(outputs.status().code(), StatusCode::kInvalidArgument) << outputs.status().to_string();
    EXPECT_NE(outputs.status().message().find("'input'"), std::string::npos) << outputs.status().to_string();
  }
}

// SessionOptions::input_shapes sets symbolic dims only: a static dim given otherwise
// is refused at load, naming the input and both shapes.
TEST(CpuSession, InputShapesCannotChangeStaticDims) {
  SessionOptions options = cpu_options(1, "shapes.sqlite");
  options.input_shapes["input"] = {1, 3, 9, 9};
  auto refused = Session::load(tiny("tiny_cnn"), options);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("graph input 'input' is declared [batch, 3, 8, 8] in the model; the "
                                            "given shape [1, 3, 9, 9] differs in dim 2 (9, not 8)"),
            std::string::npos)
      << refused.status().to_string();
  options.input_shapes["input"] = {3, 3, 8, 8};  // the batch, a symbolic dim: set
  auto session = load_ok(tiny("tiny_cnn"), options);
  ASSERT_TRUE(session);
  EXPECT_EQ(session->inputs()[0].shape, (Shape{3, 3, 8, 8}));
}

// SessionOptions::constant_inputs: ONNX's Reshape test feeds the target shape as a
// graph input; given at load, it folds, is no longer a session input, and the output
// is the expected one.
TEST(CpuSession, ConstantInputsResolveShapeInputs) {
  const std::string dir = "/usr/share/libonnx-testdata/data/node/test_reshape_reordered_all_dims";
  if (!fs::exists(dir + "/model.onnx")) GTEST_SKIP() << "libonnx-testdata is not installed";
  auto data = read_tensor_file(dir + "/test_data_set_0/input_0.pb");
  auto target = read_tensor_file(dir + "/test_data_set_0/input_1.pb");
  auto expected = read_tensor_file(dir + "/test_data_set_0/output_0.pb");
  ASSERT_TRUE(data && target && expected);
  SessionOptions options = cpu_options(1, "constants.sqlite");
  auto without = Session::load(dir + "/model.onnx", options);
  ASSERT_FALSE(without.has_value());
  EXPECT_EQ(without.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(without.status().message().find("constant_inputs"), std::string::npos) << without.status().to_string();

  options.constant_inputs["shape"] = *target;
  auto session = load_ok(dir + "/model.onnx", options);
  ASSERT_TRUE(session);
  ASSERT_EQ(session->inputs().size(), 1u);
  EXPECT_EQ(session->inputs()[0].name, "data");
  auto outputs = session->run({*data});
  ASSERT_TRUE(outputs.has_value()) << outputs.status().to_string();
  EXPECT_EQ((*outputs)[0].shape(), expected->shape());
  EXPECT_EQ(std::memcmp((*outputs)[0].raw(), expected->raw(), expected->nbytes()), 0);
}

// A model without convolutions needs no timings: no database is opened, even one that cannot exist.
TEST(DefaultPlan, ModelWithoutConvolutionsOpensNoDatabase) {
  SessionOptions options = cpu_options(2, "unused.sqlite");
  options.benchmark_db = "/proc/ucudnn-api-test/benchmarks.sqlite";
  auto session = load_ok(tiny("tiny_reshape"), options);
  ASSERT_TRUE(session);
  EXPECT_EQ(nlohmann::json::parse(session->plan_json())["policy"], "wr");
  auto outputs = session->run(random_inputs(*session));
  EXPECT_TRUE(outputs.has_value()) << outputs.status().to_string();
  // One with convolutions does open it, and the error names it.
  auto refused = Session::load(tiny("tiny_cnn"), options);
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.status().message().find("/proc/ucudnn-api-test"), std::string::npos)
      << refused.status().to_string();
}

TEST(CpuSession, RefusesWhatOnlyTheGpuDoes) {
  auto session = load_ok(tiny("tiny_cnn"), cpu_options(1, "cpu.sqlite"));
  ASSERT_TRUE(session);
  const Status device_io = session->run_on_device(std::vector<const void*>{nullptr}, std::vector<void*>{nullptr});
  EXPECT_EQ(device_io.code(), StatusCode::kUnsupported);
  EXPECT_NE(device_io.message().find("run_on_device needs a CUDA session"), std::string::npos) << device_io.message();
  if (!cuda_available()) {
    SessionOptions options = cpu_options(1, "cuda.sqlite");
    options.device = Device::kCuda;
    auto cuda = Session::load(tiny("tiny_cnn"), options);
    ASSERT_FALSE(cuda.has_value());
    EXPECT_EQ(cuda.status().code(), StatusCode::kUnsupported);
    EXPECT_NE(cuda.status().message().find("device 'cuda' is not available"), std::string::npos);
  }
}

// Note [pinned threads]: more threads than CPUs is refused, saying what to lower; otherwise the
// loading thread ends on the first CPU the process may use and the session runs; a session loaded
// without pinning gives the loading thread every CPU back.
TEST(CpuSession, PinnedThreadsAndUnpinnedAgain) {
  for (const char* binding : {"OMP_PROC_BIND", "OMP_PLACES", "GOMP_CPU_AFFINITY"})
    if (std::getenv(binding) != nullptr) GTEST_SKIP() << binding << " is set: pinning is refused under it";
  cpu_set_t mask;
  CPU_ZERO(&mask);
  ASSERT_EQ(sched_getaffinity(0, sizeof mask, &mask), 0);
  struct RestoreMask {  // the tests after this one get every CPU, whatever fails here
    cpu_set_t mask;
    ~RestoreMask() { sched_setaffinity(0, sizeof mask, &mask); }
  } restore{mask};
  const int cpus = CPU_COUNT(&mask);
  int first = 0;
  while (!CPU_ISSET(first, &mask)) ++first;

  SessionOptions options = cpu_options(1, "pinned.sqlite");
  options.pin_threads = true;
  options.threads = cpus + 1;
  auto too_many = Session::load(tiny("tiny_cnn"), options);
  ASSERT_FALSE(too_many.has_value());
  EXPECT_EQ(too_many.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(too_many.status().message().find("cannot pin " + std::to_string(cpus + 1) + " threads"),
            std::string::npos) << too_many.status().to_string();
  EXPECT_NE(too_many.status().message().find("lower --threads"), std::string::npos);

  options.threads = std::min(cpus, 2);
  auto pinned = load_ok(tiny("tiny_cnn"), options);
  ASSERT_TRUE(pinned);
  cpu_set_t now;
  CPU_ZERO(&now);
  ASSERT_EQ(sched_getaffinity(0, sizeof now, &now), 0);
  EXPECT_EQ(CPU_COUNT(&now), 1);
  EXPECT_TRUE(CPU_ISSET(first, &now));
  auto outputs = pinned->run(random_inputs(*pinned));
  EXPECT_TRUE(outputs.has_value()) << outputs.status().to_string();

  options.pin_threads = false;
  auto unpinned = load_ok(tiny("tiny_cnn"), options);
  ASSERT_TRUE(unpinned);
  CPU_ZERO(&now);
  ASSERT_EQ(sched_getaffinity(0, sizeof now, &now), 0);
  EXPECT_TRUE(CPU_EQUAL(&now, &mask)) << CPU_COUNT(&now) << " of " << cpus << " CPUs";
}

}  // namespace
}  // namespace ucudnn
