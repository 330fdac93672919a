// The public API on the GPU, end to end (moved unchanged from the former
// cuda_ops_test): Session::run_on_device on uploaded inputs gives bitwise
// run()'s outputs and names a GpuTensor of the wrong shape; a CPU session
// refuses it; two CUDA sessions on two threads run independently and match
// the CPU; without a GPU a CUDA context is a clear error. GPU tests skip,
// saying so, where no GPU is present.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "runtime/cuda/cuda_context.h"
#include "tests/support/tensor_checks.h"
#include "tests/test_paths.h"
#include "ucudnn/ucudnn.h"

namespace ucudnn::cuda {
namespace {

using ucudnn_test::expect_bitwise_equal;

bool have_gpu() { return device_count() > 0; }

std::vector<Tensor> download_all(const std::vector<GpuTensor>& tensors) {
  std::vector<Tensor> host;
  for (const GpuTensor& t : tensors) {
    auto down = t.download();
    EXPECT_TRUE(down.has_value()) << down.status().to_string();
    host.push_back(down ? *down : Tensor());
  }
  return host;
}

// The public API end to end on the tiny CNN: run_on_device on uploaded inputs
// gives bitwise run()'s outputs, whichever layout the session chose.
TEST(CudaSession, RunOnDeviceEqualsRun) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device present: GPU cases run on the device machine";
  SessionOptions options;
  options.device = Device::kCuda;
  options.batch = 3;
  auto session = Session::load(ucudnn_test::source_dir() + "/models/tiny/tiny_cnn/model.onnx", options);
  ASSERT_TRUE(session.has_value()) << session.status().to_string();
  std::mt19937 rng(4);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<Tensor> inputs;
  std::vector<GpuTensor> device_inputs, device_outputs;
  for (const TensorInfo& info : (*session)->inputs()) {
    ASSERT_EQ(info.dtype, DType::kFloat32) << info.name;
    auto t = Tensor::allocate(info.dtype, info.shape);
    ASSERT_TRUE(t.has_value());
    for (int64_t i = 0; i < t->numel(); ++i) t->data<float>()[i] = dist(rng);
    auto up = GpuTensor::upload(*t);
    ASSERT_TRUE(up.has_value()) << up.status().to_string();
    inputs.push_back(std::move(*t));
    device_inputs.push_back(std::move(*up));
  }
  for (const TensorInfo& info : (*session)->outputs()) {
    auto out = GpuTensor::allocate(info.dtype, info.shape);
    ASSERT_TRUE(out.has_value()) << out.status().to_string();
    device_outputs.push_back(std::move(*out));
  }
  auto expected = (*session)->run(inputs);
  ASSERT_TRUE(expected.has_value()) << expected.status().to_string();
  for (int repeat = 0; repeat < 2; ++repeat) {
    Status status = (*session)->run_on_device(device_inputs, device_outputs);
    ASSERT_TRUE(status.is_ok()) << status.to_string();
    expect_bitwise_equal(download_all(device_outputs), *expected, "run_on_device, repeat " + std::to_string(repeat));
  }

  // A GpuTensor of another shape is named, not run.
  std::vector<GpuTensor> wrong;
  auto small = GpuTensor::allocate(DType::kFloat32, {1});
  ASSERT_TRUE(small.has_value());
  wrong.push_back(std::move(*small));
  Status status = (*session)->run_on_device(wrong, device_outputs);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.to_string();
  EXPECT_NE(status.message().find("float32[1] on the GPU"), std::string::npos) << status.message();
}

// Runs without a GPU too.
TEST(CpuSession, RunOnDeviceIsUnsupported) {
  SessionOptions options;
  options.device = Device::kCpu;
  auto session = Session::load(ucudnn_test::source_dir() + "/models/tiny/tiny_cnn/model.onnx", options);
  ASSERT_TRUE(session.has_value()) << session.status().to_string();
  Status status = (*session)->run_on_device(std::vector<const void*>{nullptr}, std::vector<void*>{nullptr});
  EXPECT_EQ(status.code(), StatusCode::kUnsupported);
  EXPECT_NE(status.message().find("needs a CUDA session"), std::string::npos) << status.message();
}

// Two sessions of one model (each its own context, stream, arena and plan),
// loaded and run on two threads at once, 20 runs each: every run gives the same
// bits, and they match the CPU's result (strict FP32).
TEST(CudaSession, SessionsOnTwoThreadsRunIndependently) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device present: GPU cases run on the device machine";
  const std::string model = ucudnn_test::source_dir() + "/models/tiny/tiny_residual/model.onnx";
  auto options_for = [](int which, Device device) {
    SessionOptions options;
    options.device = device;
    options.batch = 4 + which;  // different shapes: nothing can be shared by accident
    options.math = Math::kFp32;
    if (device == Device::kCuda) options.layout = which == 0 ? Layout::kNchw : Layout::kNhwc;
    return options;
  };
  std::vector<Tensor> inputs, expected;
  for (int which = 0; which < 2; ++which) {
    auto cpu = Session::load(model, options_for(which, Device::kCpu));
    ASSERT_TRUE(cpu.has_value()) << cpu.status().to_string();
    std::mt19937 rng(which);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    Tensor x = *Tensor::allocate((*cpu)->inputs()[0].dtype, (*cpu)->inputs()[0].shape);
    for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = dist(rng);
    auto y = (*cpu)->run({x});
    ASSERT_TRUE(y.has_value()) << y.status().to_string();
    inputs.push_back(x);
    expected.push_back((*y)[0]);
  }
  std::vector<std::string> failures(2);
  auto worker = [&](int which) {
    auto session = Session::load(model, options_for(which, Device::kCuda));
    if (!session) {
      failures[which] = session.status().to_string();
      return;
    }
    auto first = (*session)->run({inputs[which]});
    if (!first) {
      failures[which] = first.status().to_string();
      return;
    }
    const Tensor& y = (*first)[0];
    for (int64_t i = 0; i < y.numel(); ++i) {
      const float want = expected[which].data<float>()[i];
      if (std::abs(y.data<float>()[i] - want) > 1e-4f * (1 + std::abs(want))) {
        failures[which] = "element " + std::to_string(i) + " differs from the CPU's";
        return;
      }
    }
    for (int repeat = 0; repeat < 20; ++repeat) {
      auto again = (*session)->run({inputs[which]});
      if (!again) {
        failures[which] = again.status().to_string();
        return;
      }
      if (std::memcmp((*again)[0].raw(), y.raw(), y.nbytes()) != 0) {
        failures[which] = "run " + std::to_string(repeat) + " differs from the first";
        return;
      }
    }
  };
  std::thread a(worker, 0), b(worker, 1);
  a.join();
  b.join();
  EXPECT_EQ(failures[0], "");
  EXPECT_EQ(failures[1], "");
}

TEST(CudaSession, NoGpuIsAClearError) {
  if (have_gpu()) GTEST_SKIP() << "a GPU is present: this test checks the no-GPU message";
  EXPECT_FALSE(cuda_available());
  auto context = CudaContext::create();
  ASSERT_FALSE(context.has_value());
  EXPECT_NE(context.status().message().find("no CUDA device"), std::string::npos) << context.status().message();
}

}  // namespace
}  // namespace ucudnn::cuda
