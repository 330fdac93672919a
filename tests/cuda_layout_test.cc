// The GPU's channels-last layout (Note [channels-last], runtime/ir/layout.h):
// every tiny model gives the same outputs in NCHW and NHWC sessions (strict
// FP32, so the two differ only by summation order), --layout auto picks one of
// them and runs, and divided convolutions (with a residual input) match in both
// layouts. The CPU's own NHWC is cpu_layout_test's.
// GPU cases skip without a GPU (CI); they run on the device machine.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>

#include <nlohmann/json.hpp>

#include "api/loading.h"
#include "runtime/plan/plan_json.h"
#include "tests/support/tensor_checks.h"
#include "tests/test_paths.h"
#include "ucudnn/ucudnn.h"

namespace ucudnn {
namespace {

std::string model_path(const std::string& name) {
  return ucudnn_test::source_dir() + "/models/tiny/" + name + "/model.onnx";
}

std::vector<Tensor> random_inputs(const Session& session) {
  std::mt19937 rng(11);
  std::vector<Tensor> inputs;
  for (const TensorInfo& info : session.inputs())
    inputs.push_back(ucudnn_test::make_random_tensor(info.dtype, info.shape, rng));
  return inputs;
}

std::vector<Tensor> run_model(const std::string& name, Device device, Layout layout, const std::vector<Tensor>* inputs,
                              std::vector<Tensor>* inputs_used = nullptr) {
  SessionOptions options;
  options.device = device;
  options.batch = 3;
  options.layout = layout;
  options.math = Math::kFp32;
  auto session = Session::load(model_path(name), options);
  EXPECT_TRUE(session.has_value()) << name << " " << layout_name(layout) << ": " << session.status().to_string();
  if (!session) return {};
  std::vector<Tensor> in = inputs ? *inputs : random_inputs(**session);
  auto outputs = (*session)->run(in);
  EXPECT_TRUE(outputs.has_value()) << name << ": " << outputs.status().to_string();
  if (inputs_used) *inputs_used = in;
  return outputs ? std::move(*outputs) : std::vector<Tensor>{};
}

void expect_close(const std::vector<Tensor>& a, const std::vector<Tensor>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t o = 0; o < a.size(); ++o) {
    ASSERT_EQ(a[o].shape(), b[o].shape()) << what;
    for (int64_t i = 0; i < a[o].numel(); ++i)
      ASSERT_NEAR(a[o].data<float>()[i], b[o].data<float>()[i], 1e-4 * (1 + std::abs(a[o].data<float>()[i])))
          << what << ", output " << o << ", element " << i;
  }
}

// The CPU's outputs for `model` with `options` (run on the CPU, one stream) on
// random inputs, which it stores in `inputs`; empty after a reported failure.
std::vector<Tensor> cpu_reference(const std::string& model, SessionOptions options, std::vector<Tensor>* inputs) {
  options.device = Device::kCpu;
  options.streams = 1;
  auto session = Session::load(model, options);
  EXPECT_TRUE(session.has_value()) << session.status().to_string();
  if (!session) return {};
  *inputs = random_inputs(**session);
  auto outputs = (*session)->run(*inputs);
  EXPECT_TRUE(outputs.has_value()) << outputs.status().to_string();
  return outputs ? std::move(*outputs) : std::vector<Tensor>{};
}

TEST(CudaLayout, NhwcMatchesNchwAndTheCpuOnEveryTinyModel) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device present: GPU tests run on the device machine";
  for (const char* name :
       {"tiny_cnn", "tiny_residual", "tiny_branches", "tiny_reshape", "tiny_downsample", "tiny_decoder",
        "tiny_upsample"}) {
    std::vector<Tensor> inputs;
    const auto cpu = run_model(name, Device::kCpu, Layout::kNchw, nullptr, &inputs);
    const auto nchw = run_model(name, Device::kCuda, Layout::kNchw, &inputs);
    const auto nhwc = run_model(name, Device::kCuda, Layout::kNhwc, &inputs);
    const auto automatic = run_model(name, Device::kCuda, Layout::kAuto, &inputs);
    expect_close(cpu, nchw, std::string(name) + " cpu vs cuda nchw");
    expect_close(cpu, nhwc, std::string(name) + " cpu vs cuda nhwc");
    expect_close(cpu, automatic, std::string(name) + " cpu vs cuda auto");
  }
}

// A plan whose every Conv runs as micro-batches 3 + 5 (cuDNN's default algorithm),
// in both layouts: the residual block's second Conv divides its z input too
// (Note [fused nodes]); the outputs must match the CPU's.
TEST(CudaLayout, DividedResidualConvMatchesTheCpu) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device present: GPU tests run on the device machine";
  const std::string model = model_path("tiny_residual");
  const std::string db = ::testing::TempDir() + "/cuda_layout_test.sqlite";
  std::remove(db.c_str());
  SessionOptions options;
  options.batch = 8;
  options.math = Math::kFp32;
  options.progress = false;
  options.benchmark_db = db;
  std::vector<Tensor> inputs;
  const std::vector<Tensor> cpu = cpu_reference(model, options, &inputs);
  ASSERT_FALSE(cpu.empty());
  for (Layout layout : {Layout::kNchw, Layout::kNhwc}) {
    SessionOptions gpu_options = options;  // the optimizer's plan for this GPU, only to be divided below
    gpu_options.device = Device::kCuda;
    gpu_options.layout = layout;
    auto nchw = load_inference_graph(model, gpu_options);
    ASSERT_TRUE(nchw.has_value()) << nchw.status().to_string();
    auto planned = optimizer::plan_model(*nchw, plan_request(gpu_options));
    ASSERT_TRUE(planned.has_value()) << planned.status().to_string();
    const ir::Graph* graph = &planned->graph;
    runtime::Plan plan = planned->result.plan;
    int divided = 0;
    for (runtime::PlanStep& step : plan.steps) {
      if (graph->nodes[step.node].op != OpKind::kConv) continue;
      step.micro_batches = {{3, -1}, {5, -1}};
      ++divided;
    }
    ASSERT_EQ(divided, 2);
    const std::string plan_path = ::testing::TempDir() + "/divided_" + layout_name(layout) + ".plan.json";
    ASSERT_TRUE(runtime::save_plan(plan_path, plan, *graph).is_ok());
    SessionOptions run_options = options;
    run_options.device = Device::kCuda;
    run_options.plan_path = plan_path;
    auto session = Session::load(model, run_options);
    ASSERT_TRUE(session.has_value()) << session.status().to_string();
    auto outputs = (*session)->run(inputs);
    ASSERT_TRUE(outputs.has_value()) << outputs.status().to_string();
    expect_close(cpu, *outputs, std::string("divided residual, ") + layout_name(layout));
  }
}

// Two streams (Note [side stream], runtime/plan/side_stream.h): the
// bottleneck block's downsample runs on the side stream beside conv1 and conv2.
// Planned under wd with a shared workspace (saved, then loaded) and under the
// default policy (wr), in both layouts, run repeatedly on host buffers and on
// device buffers: every output must match the CPU's.
TEST(CudaLayout, SideStreamRunsMatchTheCpu) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device present: GPU tests run on the device machine";
  const std::string model = model_path("tiny_downsample");
  const std::string db = ::testing::TempDir() + "/cuda_layout_streams_test.sqlite";
  std::remove(db.c_str());
  SessionOptions options;
  options.batch = 64;  // enough work per convolution for the two streams to overlap
  options.math = Math::kFp32;
  options.progress = false;
  options.benchmark_db = db;
  options.streams = 2;
  std::vector<Tensor> inputs;
  const std::vector<Tensor> cpu = cpu_reference(model, options, &inputs);
  ASSERT_FALSE(cpu.empty());
  auto check_session = [&](const SessionOptions& run_options, const std::string& what) {
    auto session = Session::load(model, run_options);
    ASSERT_TRUE(session.has_value()) << what << ": " << session.status().to_string();
    for (int i = 0; i < 5; ++i) {
      auto outputs = (*session)->run(inputs);
      ASSERT_TRUE(outputs.has_value()) << what << ": " << outputs.status().to_string();
      expect_close(cpu, *outputs, what + ", run " + std::to_string(i));
    }
    std::vector<GpuTensor> device_inputs, device_outputs;
    for (const Tensor& t : inputs) {
      auto uploaded = GpuTensor::upload(t);
      ASSERT_TRUE(uploaded.has_value()) << uploaded.status().to_string();
      device_inputs.push_back(std::move(*uploaded));
    }
    for (const TensorInfo& info : (*session)->outputs()) {
      auto allocated = GpuTensor::allocate(info.dtype, info.shape);
      ASSERT_TRUE(allocated.has_value()) << allocated.status().to_string();
      device_outputs.push_back(std::move(*allocated));
    }
    const Status status = (*session)->run_on_device(device_inputs, device_outputs);
    ASSERT_TRUE(status.is_ok()) << what << ": " << status.to_string();
    auto downloaded = device_outputs[0].download();
    ASSERT_TRUE(downloaded.has_value()) << downloaded.status().to_string();
    expect_close(cpu, {std::move(*downloaded)}, what + ", on device buffers");
  };
  for (Layout layout : {Layout::kNchw, Layout::kNhwc}) {
    SessionOptions planned_options = options;
    planned_options.layout = layout;
    planned_options.device = Device::kCuda;
    planned_options.policy = Policy::kWd;
    planned_options.share_workspace = true;
    auto planned = plan(model, planned_options);
    ASSERT_TRUE(planned.has_value()) << planned.status().to_string();
    ASSERT_EQ(planned->summary().side_stream_convolutions, 1) << layout_name(layout);
    const nlohmann::json report = nlohmann::json::parse(planned->report_json());
    EXPECT_EQ(report["side_stream_nodes"], nlohmann::json::array({"downsample"}));
    const std::string plan_path = ::testing::TempDir() + "/streams_" + layout_name(layout) + ".plan.json";
    ASSERT_TRUE(save_plan(*planned, plan_path).is_ok());
    SessionOptions run_options = options;
    run_options.device = Device::kCuda;
    run_options.plan_path = plan_path;
    check_session(run_options, std::string("wd plan, two streams, ") + layout_name(layout));

    SessionOptions default_options = options;  // the default plan (wr, 64 MiB per convolution), two streams
    default_options.device = Device::kCuda;
    default_options.layout = layout;
    check_session(default_options, std::string("default plan, two streams, ") + layout_name(layout));
  }
}

// SessionOptions::streams is checked when a session loads, on any device.
TEST(CudaLayout, StreamCountMustBeOneOrTwo) {
  SessionOptions options;
  options.device = Device::kCpu;
  options.streams = 3;
  auto session = Session::load(model_path("tiny_downsample"), options);
  ASSERT_FALSE(session.has_value());
  EXPECT_EQ(session.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(session.status().message().find("streams must be 1 or 2, got 3"), std::string::npos)
      << session.status().message();
}

}  // namespace
}  // namespace ucudnn
