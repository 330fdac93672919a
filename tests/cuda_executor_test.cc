// runtime::Executor over the CUDA backend (cuda::make_cuda_backend): a divided
// convolution (micro-batches 3 + 5 with two cuDNN algorithms) equals the
// undivided one; a plan whose micro-batches do not cover the batch is refused;
// pools and a Conv whose padding cuDNN cannot express match the CPU in NCHW and NHWC;
// running on bound device buffers (run_bound) gives bitwise the outputs of a
// host run, micro-batches included, copies outputs it cannot bind, and refuses
// bad buffers. Every op against the reference is the op table's
// (op_table_test.cc). GPU tests skip, saying so, where no GPU is present; the
// no-GPU error runs here.
#include <gtest/gtest.h>

#include <cudnn.h>

#include <memory>

#include "runtime/cuda/cuda_backend.h"
#include "runtime/cuda/cuda_context.h"
#include "runtime/executor/executor.h"
#include "tests/support/backend_runner.h"
#include "tests/support/one_node_graph.h"
#include "tests/support/tensor_checks.h"

namespace ucudnn_test {
namespace {

using ucudnn::DType;
using ucudnn::OpKind;
using ucudnn::Status;
using ucudnn::StatusCode;
using ucudnn::Tensor;
using IntList = std::vector<int64_t>;
namespace runtime = ucudnn::runtime;
namespace cuda = ucudnn::cuda;

bool have_gpu() { return cuda::device_count() > 0; }

// The strict-FP32 GPU backend shared with the op table; nullptr (after a failure) when it did not start.
runtime::Backend* gpu_fp32() {
  const SharedBackend shared = shared_backend(backend_config("cuda_fp32"));
  EXPECT_TRUE(shared.error.is_ok()) << shared.error.to_string();
  return shared.backend;
}

OneNodeGraph micro_batch_conv(uint32_t seed) {
  auto built = make_one_node_graph("conv_micro", OpKind::kConv, 18,
                                   {input({8, 16, 14, 14}), weight({32, 16, 3, 3}), weight({32})},
                                   {{"pads", IntList{1, 1, 1, 1}}}, 1, seed);
  EXPECT_TRUE(built.has_value()) << built.status().to_string();
  return built ? std::move(*built) : OneNodeGraph{};
}

// Micro-batches 3 + 5 with two different algorithms (IMPLICIT_GEMM, IMPLICIT_PRECOMP_GEMM).
RunOptions divided_3_5() {
  RunOptions options;
  options.micro_batches = {{3, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM},
                           {5, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM}};
  return options;
}

TEST(CudaExecutor, MicroBatchedConvEqualsUndivided) {
  if (!have_gpu()) GTEST_SKIP() << kNoCudaDevice;
  runtime::Backend* backend = gpu_fp32();
  ASSERT_NE(backend, nullptr);
  const OneNodeGraph built = micro_batch_conv(3);
  auto expected = run_on_backend(*backend, built.graph, built.feeds);
  ASSERT_TRUE(expected.has_value()) << expected.status().to_string();
  auto got = run_on_backend(*backend, built.graph, built.feeds, divided_3_5());
  ASSERT_TRUE(got.has_value()) << got.status().to_string();
  expect_close(*got, *expected, {1e-5, 1e-5}, "micro-batched conv");

  // A plan whose micro-batches do not cover the batch is refused.
  auto plan = make_plan(*backend, built.graph, divided_3_5());
  ASSERT_TRUE(plan.has_value()) << plan.status().to_string();
  plan->steps[0].micro_batches = {{3, 0}, {4, 0}};
  auto bad = runtime::Executor::create(*backend, built.graph, *plan);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument) << bad.status().to_string();
}

// [A, B, C, D] float32 with dims permuted by `perm` (NCHW ↔ NHWC).
Tensor permute4(const Tensor& t, const IntList& perm) {
  const ucudnn::Shape& in = t.shape();
  const ucudnn::Shape out = {in[perm[0]], in[perm[1]], in[perm[2]], in[perm[3]]};
  Tensor result = *Tensor::allocate(DType::kFloat32, out);
  const int64_t strides[4] = {in[1] * in[2] * in[3], in[2] * in[3], in[3], 1};
  int64_t i = 0;
  for (int64_t a = 0; a < out[0]; ++a)
    for (int64_t b = 0; b < out[1]; ++b)
      for (int64_t c = 0; c < out[2]; ++c)
        for (int64_t d = 0; d < out[3]; ++d, ++i)
          result.data<float>()[i] = t.data<float>()[a * strides[perm[0]] + b * strides[perm[1]] +
                                                    c * strides[perm[2]] + d * strides[perm[3]]];
  return result;
}

const IntList kToNhwc = {0, 2, 3, 1}, kToNchw = {0, 3, 1, 2};

// `built`'s node as the channels-last pass leaves it (Note [channels-last]):
// X, Y (and a Conv's W, a constant) in NHWC, the attribute set, X's feed transposed.
OneNodeGraph channels_last(const OneNodeGraph& built) {
  OneNodeGraph nhwc = built;
  ucudnn::ir::Node& node = nhwc.graph.nodes.front();
  node.attrs.set("channels_last", int64_t{1});
  for (ucudnn::ir::ValueId id : {node.inputs[0], node.outputs[0]}) {
    ucudnn::ir::Value& v = nhwc.graph.value(id);
    v.shape = {v.shape[0], v.shape[2], v.shape[3], v.shape[1]};
  }
  if (node.op == OpKind::kConv) {
    ucudnn::ir::Value& w = nhwc.graph.value(node.inputs[1]);
    w.constant = permute4(*w.constant, kToNhwc);
    w.shape = w.constant->shape();
  }
  nhwc.feeds[0] = permute4(nhwc.feeds[0], kToNhwc);
  return nhwc;
}

// Pools and a Conv whose padding cuDNN cannot express (Note [pool padding],
// Note [conv asymmetric padding]): run on the GPU in NCHW and NHWC, they match the CPU.
TEST(CudaExecutor, PaddingCudnnCannotExpressMatchesTheCpu) {
  if (!have_gpu()) GTEST_SKIP() << kNoCudaDevice;
  runtime::Backend* backend = gpu_fp32();
  ASSERT_NE(backend, nullptr);
  const SharedBackend cpu = shared_backend(backend_config("cpu"));
  ASSERT_NE(cpu.backend, nullptr);
  struct Case {
    const char* name;
    OpKind op;
    std::vector<InputSpec> inputs;
    AttrList attrs;
  };
  const std::vector<Case> cases = {
      {"asymmetric_max_pool", OpKind::kMaxPool, {input({2, 3, 6, 7})},
       {{"kernel_shape", IntList{2, 2}}, {"pads", IntList{0, 0, 1, 1}}}},
      {"ceil_max_pool", OpKind::kMaxPool, {input({2, 5, 8, 7})},
       {{"kernel_shape", IntList{3, 3}}, {"strides", IntList{2, 2}}, {"ceil_mode", int64_t{1}}}},
      {"dilated_max_pool", OpKind::kMaxPool, {input({1, 4, 9, 8})},
       {{"kernel_shape", IntList{3, 2}}, {"dilations", IntList{2, 3}}, {"pads", IntList{1, 0, 2, 1}}}},
      {"ceil_average_pool", OpKind::kAveragePool, {input({2, 3, 8, 9})},
       {{"kernel_shape", IntList{3, 3}}, {"strides", IntList{2, 2}}, {"pads", IntList{1, 0, 0, 1}},
        {"ceil_mode", int64_t{1}}, {"count_include_pad", int64_t{1}}}},
      {"same_upper_average_pool", OpKind::kAveragePool, {input({1, 6, 7, 6})},
       {{"kernel_shape", IntList{2, 3}}, {"strides", IntList{2, 2}}, {"auto_pad", std::string("SAME_UPPER")}}},
      {"asymmetric_conv", OpKind::kConv, {input({2, 3, 7, 8}), weight({4, 3, 3, 2}), weight({4})},
       {{"pads", IntList{0, 1, 2, 0}}, {"strides", IntList{2, 1}}}},
  };
  for (const Case& c : cases) {
    auto built = make_one_node_graph(c.name, c.op, 19, c.inputs, c.attrs, 1, seed_for(c.name));
    ASSERT_TRUE(built.has_value()) << built.status().to_string();
    auto want = run_on_backend(*cpu.backend, built->graph, built->feeds);
    ASSERT_TRUE(want.has_value()) << want.status().to_string();
    auto got = run_on_backend(*backend, built->graph, built->feeds);
    ASSERT_TRUE(got.has_value()) << c.name << ": " << got.status().to_string();
    expect_close(*got, *want, {1e-4, 1e-5}, std::string(c.name) + " nchw");
    const OneNodeGraph nhwc = channels_last(*built);
    auto got_nhwc = run_on_backend(*backend, nhwc.graph, nhwc.feeds);
    ASSERT_TRUE(got_nhwc.has_value()) << c.name << " nhwc: " << got_nhwc.status().to_string();
    expect_close({permute4((*got_nhwc)[0], kToNchw)}, *want, {1e-4, 1e-5}, std::string(c.name) + " nhwc");
  }
}

// Device buffers made through the backend for a graph's inputs (uploaded) and outputs.
struct DeviceIo {
  std::vector<std::unique_ptr<runtime::Buffer>> buffers;
  std::vector<const void*> inputs;
  std::vector<void*> outputs;
};

DeviceIo device_io(runtime::Backend& backend, const ucudnn::ir::Graph& g, const std::vector<Tensor>& feeds) {
  DeviceIo io;
  for (const Tensor& t : feeds) {
    auto buffer = backend.allocate(t.nbytes(), "test input");
    EXPECT_TRUE(buffer.has_value()) << buffer.status().to_string();
    if (!buffer) return io;
    EXPECT_TRUE(backend.copy_to_device((*buffer)->data(), t.raw(), t.nbytes(), "test input").is_ok());
    io.inputs.push_back((*buffer)->data());
    io.buffers.push_back(std::move(*buffer));
  }
  for (ucudnn::ir::ValueId id : g.outputs) {
    const ucudnn::ir::Value& v = g.value(id);
    const auto bytes = static_cast<size_t>(ucudnn::shape_numel(v.shape)) * ucudnn::dtype_size(v.dtype);
    auto buffer = backend.allocate(bytes, "test output");
    EXPECT_TRUE(buffer.has_value()) << buffer.status().to_string();
    if (!buffer) return io;
    io.outputs.push_back((*buffer)->data());
    io.buffers.push_back(std::move(*buffer));
  }
  EXPECT_TRUE(backend.synchronize("uploading test inputs").is_ok());
  return io;
}

std::vector<Tensor> download_outputs(runtime::Backend& backend, const ucudnn::ir::Graph& g, const DeviceIo& io) {
  std::vector<Tensor> host;
  for (size_t j = 0; j < g.outputs.size(); ++j) {
    const ucudnn::ir::Value& v = g.value(g.outputs[j]);
    Tensor t = std::move(Tensor::allocate(v.dtype, v.shape)).value();
    EXPECT_TRUE(backend.copy_to_host(t.raw(), io.outputs[j], t.nbytes(), "test output").is_ok());
    host.push_back(std::move(t));
  }
  EXPECT_TRUE(backend.synchronize("downloading test outputs").is_ok());
  return host;
}

// Micro-batches 3 + 5: the bound input and output are read and written through
// offsets into the caller's buffers; a run() afterwards is back on the arena.
TEST(CudaExecutor, RunBoundEqualsRunWithMicroBatches) {
  if (!have_gpu()) GTEST_SKIP() << kNoCudaDevice;
  runtime::Backend* backend = gpu_fp32();
  ASSERT_NE(backend, nullptr);
  const OneNodeGraph built = micro_batch_conv(5);
  auto plan = make_plan(*backend, built.graph, divided_3_5());
  ASSERT_TRUE(plan.has_value()) << plan.status().to_string();
  auto executor = runtime::Executor::create(*backend, built.graph, *plan);
  ASSERT_TRUE(executor.has_value()) << executor.status().to_string();
  auto expected = (*executor)->run(built.feeds);
  ASSERT_TRUE(expected.has_value()) << expected.status().to_string();

  DeviceIo io = device_io(*backend, built.graph, built.feeds);
  ASSERT_EQ(io.outputs.size(), 1u);
  const Status status = (*executor)->run_bound(io.inputs, io.outputs);
  ASSERT_TRUE(status.is_ok()) << status.to_string();
  expect_bitwise_equal(download_outputs(*backend, built.graph, io), *expected, "run_bound, micro-batches 3 + 5");

  auto again = (*executor)->run(built.feeds);
  ASSERT_TRUE(again.has_value()) << again.status().to_string();
  expect_bitwise_equal(*again, *expected, "run after run_bound");
}

// Outputs no node writes in place: one listed twice, and a graph input passed through.
TEST(CudaExecutor, RunBoundCopiesOutputsItCannotBind) {
  if (!have_gpu()) GTEST_SKIP() << kNoCudaDevice;
  runtime::Backend* backend = gpu_fp32();
  ASSERT_NE(backend, nullptr);
  auto built = make_one_node_graph("relu", OpKind::kRelu, 14, {input({2, 3, 4, 5})}, {}, 1, 9);
  ASSERT_TRUE(built.has_value()) << built.status().to_string();
  ucudnn::ir::Graph& g = built->graph;
  g.outputs = {g.outputs[0], g.outputs[0], g.inputs[0]};
  auto executor = runtime::Executor::create(*backend, g, undivided_plan(*backend, g));
  ASSERT_TRUE(executor.has_value()) << executor.status().to_string();
  auto expected = (*executor)->run(built->feeds);
  ASSERT_TRUE(expected.has_value()) << expected.status().to_string();
  ASSERT_EQ(expected->size(), 3u);

  DeviceIo io = device_io(*backend, g, built->feeds);
  ASSERT_EQ(io.outputs.size(), 3u);
  const Status status = (*executor)->run_bound(io.inputs, io.outputs);
  ASSERT_TRUE(status.is_ok()) << status.to_string();
  expect_bitwise_equal(download_outputs(*backend, g, io), *expected, "duplicate and pass-through outputs");
}

TEST(CudaExecutor, RunBoundRejectsBadBuffers) {
  if (!have_gpu()) GTEST_SKIP() << kNoCudaDevice;
  runtime::Backend* backend = gpu_fp32();
  ASSERT_NE(backend, nullptr);
  auto built = make_one_node_graph("relu", OpKind::kRelu, 14, {input({2, 3})}, {}, 1, 1);
  ASSERT_TRUE(built.has_value()) << built.status().to_string();
  auto executor = runtime::Executor::create(*backend, built->graph, undivided_plan(*backend, built->graph));
  ASSERT_TRUE(executor.has_value()) << executor.status().to_string();
  DeviceIo io = device_io(*backend, built->graph, built->feeds);
  ASSERT_EQ(io.outputs.size(), 1u);

  auto expect_error = [&](const std::vector<const void*>& in, const std::vector<void*>& out, const std::string& text) {
    const Status status = (*executor)->run_bound(in, out);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.to_string();
    EXPECT_NE(status.message().find(text), std::string::npos) << status.message();
  };
  expect_error({}, io.outputs, "expected 1 input buffers");
  expect_error(io.inputs, {io.outputs[0], io.outputs[0]}, "expected 1 output buffers");
  expect_error({nullptr}, io.outputs, "input 'in0' (float32[2, 3]) is null");
  float host[6] = {};
  expect_error(io.inputs, {host}, "output 'out0' (float32[2, 3]) points to host memory");
  // Nothing above reached the GPU: the executor still runs.
  const Status status = (*executor)->run_bound(io.inputs, io.outputs);
  EXPECT_TRUE(status.is_ok()) << status.to_string();
}

// Runs here: without a GPU the backend cannot be made, and says why.
TEST(CudaBackend, NoGpuIsAClearError) {
  if (have_gpu()) GTEST_SKIP() << "a GPU is present: this test checks the no-GPU message";
  auto backend = cuda::make_cuda_backend(0, cuda::MathMode::kFp32);
  ASSERT_FALSE(backend.has_value());
  EXPECT_NE(backend.status().message().find("no CUDA device"), std::string::npos) << backend.status().message();
  const SharedBackend shared = shared_backend(backend_config("cuda_fp32"));
  EXPECT_EQ(shared.backend, nullptr);
  EXPECT_EQ(shared.skip_reason, kNoCudaDevice);
}

}  // namespace
}  // namespace ucudnn_test
