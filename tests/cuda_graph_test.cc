// Captured runs (Note [captured runs], runtime/executor/captured_runs.h): the executor's runs
// recorded once and replayed.
//
// Every check runs twice: here on the CPU through RecordingBackend, which emulates capture (a
// recorded call keeps the pointers it was given and runs only when replayed, as a CUDA graph's
// kernel node does), and on the GPU with real CUDA graphs (skipped without a GPU). Checked: replays
// equal eager runs bit for bit (the same kernels) and read new input values; a plain CNN, a plan with
// micro-batched convolutions and (GPU) a two-stream plan; run_bound captures again when the buffers
// change; `off`, profiling, a failed capture and a kernel that cannot be captured never replay; the
// host copies stay outside captures.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "onnx_import/onnx_import.h"
#include "optimizer/passes/passes.h"
#include "optimizer/plan_memory.h"
#include "optimizer/side_streams.h"
#include "runtime/cpu/cpu_backend.h"
#include "runtime/executor/executor.h"
#include "runtime/plan/side_stream.h"
#include "tests/support/backend_runner.h"
#include "tests/test_paths.h"

#ifdef UCUDNN_HAVE_CUDA
#include <cudnn.h>
#endif

namespace ucudnn_test {
namespace {

using ucudnn::DType;
using ucudnn::Expected;
using ucudnn::OpKind;
using ucudnn::Status;
using ucudnn::Tensor;
namespace ir = ucudnn::ir;
namespace runtime = ucudnn::runtime;
using runtime::CaptureMode;

// The capture calls a backend saw.
struct CaptureCounts {
  int begun = 0, replays = 0;
  int copies_while_capturing = 0;  // host↔device or device copies queued inside a capture
};

// `inner` with its capture calls counted (the CUDA backend, which captures for real).
class CountingBackend : public ForwardingBackend {
 public:
  explicit CountingBackend(runtime::Backend& inner) : ForwardingBackend(inner) {}
  CaptureCounts counts;

  bool supports_capture() const override { return inner_.supports_capture(); }
  Status begin_capture() override {
    ++counts.begun;
    Status status = inner_.begin_capture();
    capturing_ = status.is_ok();
    return status;
  }
  Expected<std::unique_ptr<runtime::CapturedWork>> end_capture() override {
    capturing_ = false;
    return inner_.end_capture();
  }
  Status replay(runtime::CapturedWork& work) override {
    ++counts.replays;
    return inner_.replay(work);
  }
  Status copy_to_device(void* dst, const void* src, size_t bytes, const std::string& what) override {
    counts.copies_while_capturing += capturing_ ? 1 : 0;
    return inner_.copy_to_device(dst, src, bytes, what);
  }
  Status copy_to_host(void* dst, const void* src, size_t bytes, const std::string& what) override {
    counts.copies_while_capturing += capturing_ ? 1 : 0;
    return inner_.copy_to_host(dst, src, bytes, what);
  }
  Status copy_on_device(void* dst, const void* src, size_t bytes, const std::string& what) override {
    counts.copies_while_capturing += capturing_ ? 1 : 0;
    return inner_.copy_on_device(dst, src, bytes, what);
  }

 protected:
  bool capturing_ = false;
};

// The CPU backend with capture emulated: while capturing, a kernel call is recorded with copies of
// its arguments (the tensors' pointers as they are then) instead of run; replay runs the recorded
// calls in order. `fail_end_capture` makes end_capture fail; a kernel of op `not_capturable` says it
// cannot be captured.
class RecordingBackend final : public CountingBackend {
 public:
  explicit RecordingBackend(runtime::Backend& inner) : CountingBackend(inner) {}
  bool fail_end_capture = false;
  OpKind not_capturable = OpKind::kCount;

  bool supports_capture() const override { return true; }
  Status begin_capture() override {
    ++counts.begun;
    recording_ = std::make_unique<Recording>();
    capturing_ = true;
    return Status::ok();
  }
  Expected<std::unique_ptr<runtime::CapturedWork>> end_capture() override {
    capturing_ = false;
    std::unique_ptr<Recording> recording = std::move(recording_);
    if (fail_end_capture) return ucudnn::device_error("emulated capture failure");
    return std::unique_ptr<runtime::CapturedWork>(std::move(recording));
  }
  Status replay(runtime::CapturedWork& work) override {
    ++counts.replays;
    for (const std::function<Status()>& call : static_cast<Recording&>(work).calls) UCUDNN_RETURN_IF_ERROR(call());
    return Status::ok();
  }
  Expected<std::unique_ptr<runtime::Kernel>> prepare(const runtime::KernelRequest& request) override {
    UCUDNN_ASSIGN_OR_RETURN(std::unique_ptr<runtime::Kernel> kernel, inner_.prepare(request));
    return std::unique_ptr<runtime::Kernel>(
        new RecordedKernel(*this, std::move(kernel), request.node.op != not_capturable));
  }

 private:
  struct Recording final : runtime::CapturedWork {
    std::vector<std::function<Status()>> calls;
  };
  class RecordedKernel final : public runtime::Kernel {
   public:
    RecordedKernel(RecordingBackend& backend, std::unique_ptr<runtime::Kernel> kernel, bool capturable)
        : backend_(backend), kernel_(std::move(kernel)), capturable_(capturable) {}
    size_t workspace_bytes() const override { return kernel_->workspace_bytes(); }
    bool capturable() const override { return capturable_; }
    Status run(const runtime::KernelIo& io) override {
      if (backend_.recording_ == nullptr) return kernel_->run(io);
      backend_.recording_->calls.push_back([kernel = kernel_.get(), src = io.src, dst = io.dst,
                                            workspace = io.workspace, bytes = io.workspace_bytes,
                                            stream = io.stream] {
        return kernel->run(runtime::KernelIo{src, dst, workspace, bytes, stream});
      });
      return Status::ok();
    }

   private:
    RecordingBackend& backend_;
    std::unique_ptr<runtime::Kernel> kernel_;
    bool capturable_;
  };
  std::unique_ptr<Recording> recording_;  // set between begin_capture and end_capture
};

runtime::Backend& cpu_backend() {
  static const std::unique_ptr<runtime::Backend> backend = ucudnn::cpu::make_cpu_backend();
  return *backend;
}

// A tiny model after the inference passes, at `batch`.
ir::Graph load(const std::string& name, int64_t batch) {
  ucudnn::onnx_import::ImportOptions options;
  options.batch = batch;
  auto graph = ucudnn::onnx_import::load_model(source_dir() + "/models/tiny/" + name + "/model.onnx", options);
  EXPECT_TRUE(graph.has_value()) << graph.status().to_string();
  if (!graph) return {};
  auto passes = ucudnn::optimizer::run_inference_passes(*graph);
  EXPECT_TRUE(passes.has_value()) << passes.status().to_string();
  return std::move(*graph);
}

// One random float32 input per graph input.
std::vector<Tensor> random_inputs(const ir::Graph& graph, uint32_t seed) {
  std::mt19937 random(seed);
  std::vector<Tensor> inputs;
  for (ir::ValueId id : graph.inputs)
    inputs.push_back(make_random_tensor(DType::kFloat32, graph.value(id).shape, random));
  return inputs;
}

std::unique_ptr<runtime::Executor> make_executor(runtime::Backend& backend, const ir::Graph& graph,
                                                 const runtime::Plan& plan, CaptureMode mode) {
  auto executor = runtime::Executor::create(backend, graph, plan, mode);
  EXPECT_TRUE(executor.has_value()) << executor.status().to_string();
  return executor ? std::move(*executor) : nullptr;
}

std::vector<Tensor> run(runtime::Executor& executor, const std::vector<Tensor>& inputs) {
  auto outputs = executor.run(inputs);
  EXPECT_TRUE(outputs.has_value()) << outputs.status().to_string();
  return outputs ? std::move(*outputs) : std::vector<Tensor>{};
}

// The sequence every capture-mode check starts from: with `mode`, run A is eager (the first run),
// B eager too (mode switched off meanwhile), then A is captured and replayed, B and A replay. Each
// replay equals the eager run of the same input bit for bit; exactly one capture, three replays.
void expect_replays_equal_eager_runs(CountingBackend& backend, const ir::Graph& graph, const runtime::Plan& plan) {
  std::unique_ptr<runtime::Executor> executor = make_executor(backend, graph, plan, CaptureMode::kAuto);
  ASSERT_NE(executor, nullptr);
  ASSERT_TRUE(executor->replays_runs()) << executor->capture_fallback();
  const std::vector<Tensor> a = random_inputs(graph, 1), b = random_inputs(graph, 2);
  const std::vector<Tensor> eager_a = run(*executor, a);
  executor->set_capture_mode(CaptureMode::kOff);
  const std::vector<Tensor> eager_b = run(*executor, b);
  executor->set_capture_mode(CaptureMode::kAuto);
  EXPECT_EQ(backend.counts.begun, 0);

  expect_bitwise_equal(run(*executor, a), eager_a, "captured run of A");
  EXPECT_EQ(backend.counts.begun, 1);
  EXPECT_EQ(backend.counts.replays, 1);
  expect_bitwise_equal(run(*executor, b), eager_b, "replay with B");
  expect_bitwise_equal(run(*executor, a), eager_a, "replay with A again");
  EXPECT_EQ(backend.counts.begun, 1);
  EXPECT_EQ(backend.counts.replays, 3);
  EXPECT_EQ(backend.counts.copies_while_capturing, 0);
  EXPECT_TRUE(executor->capture_fallback().empty()) << executor->capture_fallback();

  // Profiling never replays (an event between every step), nor captures.
  auto timings = executor->profile(a);
  ASSERT_TRUE(timings.has_value()) << timings.status().to_string();
  EXPECT_EQ(timings->size(), graph.nodes.size() + 2);
  EXPECT_EQ(backend.counts.begun, 1);
  EXPECT_EQ(backend.counts.replays, 3);
  expect_bitwise_equal(run(*executor, b), eager_b, "replay after profiling");
}

// Caller-owned buffers for run_bound: the inputs' values copied in, outputs of the graph's sizes.
struct BoundBuffers {
  std::vector<std::unique_ptr<runtime::Buffer>> owned;
  std::vector<const void*> inputs;
  std::vector<void*> outputs;
};

BoundBuffers bound_buffers(runtime::Backend& backend, const ir::Graph& graph, const std::vector<Tensor>& inputs) {
  BoundBuffers io;
  auto add = [&](size_t bytes) -> void* {
    auto buffer = backend.allocate(bytes, "test buffer");
    EXPECT_TRUE(buffer.has_value()) << buffer.status().to_string();
    if (!buffer) return nullptr;
    io.owned.push_back(std::move(*buffer));
    return io.owned.back()->data();
  };
  for (const Tensor& t : inputs) {
    void* data = add(t.nbytes());
    EXPECT_TRUE(backend.copy_to_device(data, t.raw(), t.nbytes(), "test input").is_ok());
    io.inputs.push_back(data);
  }
  for (ir::ValueId id : graph.outputs) {
    const ir::Value& v = graph.value(id);
    io.outputs.push_back(add(static_cast<size_t>(ucudnn::shape_numel(v.shape)) * ucudnn::dtype_size(v.dtype)));
  }
  EXPECT_TRUE(backend.synchronize("uploading test inputs").is_ok());
  return io;
}

void write_inputs(runtime::Backend& backend, const BoundBuffers& io, const std::vector<Tensor>& inputs) {
  for (size_t i = 0; i < inputs.size(); ++i)
    EXPECT_TRUE(backend.copy_to_device(const_cast<void*>(io.inputs[i]), inputs[i].raw(), inputs[i].nbytes(), "input")
                    .is_ok());
  EXPECT_TRUE(backend.synchronize("uploading test inputs").is_ok());
}

std::vector<Tensor> run_bound(runtime::Backend& backend, runtime::Executor& executor, const ir::Graph& graph,
                              const BoundBuffers& io) {
  const Status status = executor.run_bound(io.inputs, io.outputs);
  EXPECT_TRUE(status.is_ok()) << status.to_string();
  std::vector<Tensor> host;
  for (size_t j = 0; j < graph.outputs.size(); ++j) {
    const ir::Value& v = graph.value(graph.outputs[j]);
    Tensor t = std::move(Tensor::allocate(v.dtype, v.shape)).value();
    EXPECT_TRUE(backend.copy_to_host(t.raw(), io.outputs[j], t.nbytes(), "test output").is_ok());
    host.push_back(std::move(t));
  }
  EXPECT_TRUE(backend.synchronize("downloading test outputs").is_ok());
  return host;
}

// run_bound replays while its buffers stay, captures again when they change (a replay would write
// the previous buffers), reads new values written into the same buffers; `run` keeps its own capture.
void expect_changed_buffers_captured_again(CountingBackend& backend, const ir::Graph& graph,
                                           const runtime::Plan& plan) {
  std::unique_ptr<runtime::Executor> executor = make_executor(backend, graph, plan, CaptureMode::kOn);
  ASSERT_NE(executor, nullptr);
  const std::vector<Tensor> a = random_inputs(graph, 3), b = random_inputs(graph, 4);
  const std::vector<Tensor> eager_a = run(*executor, a);  // the first run: eager
  executor->set_capture_mode(CaptureMode::kOff);
  const std::vector<Tensor> eager_b = run(*executor, b);
  executor->set_capture_mode(CaptureMode::kOn);

  BoundBuffers first = bound_buffers(backend, graph, a), second = bound_buffers(backend, graph, b);
  expect_bitwise_equal(run_bound(backend, *executor, graph, first), eager_a, "first buffers, captured");
  expect_bitwise_equal(run_bound(backend, *executor, graph, first), eager_a, "first buffers, replayed");
  EXPECT_EQ(backend.counts.begun, 1);
  expect_bitwise_equal(run_bound(backend, *executor, graph, second), eager_b, "second buffers, captured");
  EXPECT_EQ(backend.counts.begun, 2);
  write_inputs(backend, first, b);
  expect_bitwise_equal(run_bound(backend, *executor, graph, first), eager_b, "first buffers, new values");
  EXPECT_EQ(backend.counts.begun, 3);
  EXPECT_EQ(backend.counts.replays, 4);
  // `run` is captured apart (the arena), and does not disturb run_bound's capture.
  expect_bitwise_equal(run(*executor, a), eager_a, "run after run_bound, captured");
  expect_bitwise_equal(run_bound(backend, *executor, graph, first), eager_b, "first buffers, replayed again");
  EXPECT_EQ(backend.counts.begun, 4);
  EXPECT_EQ(backend.counts.replays, 6);
  EXPECT_EQ(backend.counts.copies_while_capturing, 0);
}

// Mode off: no capture, no replay, whatever the runs; switching off drops what was captured.
void expect_off_never_captures(CountingBackend& backend, const ir::Graph& graph, const runtime::Plan& plan) {
  std::unique_ptr<runtime::Executor> executor = make_executor(backend, graph, plan, CaptureMode::kOff);
  ASSERT_NE(executor, nullptr);
  EXPECT_FALSE(executor->replays_runs());
  const std::vector<Tensor> a = random_inputs(graph, 5);
  const std::vector<Tensor> eager_a = run(*executor, a);
  BoundBuffers io = bound_buffers(backend, graph, a);
  for (int i = 0; i < 3; ++i) {
    expect_bitwise_equal(run(*executor, a), eager_a, "run, off");
    expect_bitwise_equal(run_bound(backend, *executor, graph, io), eager_a, "run_bound, off");
  }
  EXPECT_EQ(backend.counts.begun, 0);
  EXPECT_EQ(backend.counts.replays, 0);

  executor->set_capture_mode(CaptureMode::kOn);
  expect_bitwise_equal(run(*executor, a), eager_a, "run, on: captured");
  EXPECT_EQ(backend.counts.begun, 1);
  executor->set_capture_mode(CaptureMode::kOff);
  expect_bitwise_equal(run(*executor, a), eager_a, "run, off again");
  EXPECT_EQ(backend.counts.begun, 1);
  EXPECT_EQ(backend.counts.replays, 1);
}

// ---- the CPU, capture emulated ---------------------------------------------------------------

const ir::Graph& cnn(int64_t batch) {
  static const ir::Graph graph2 = load("tiny_cnn", 2), graph8 = load("tiny_cnn", 8);
  return batch == 8 ? graph8 : graph2;
}

runtime::Plan cpu_plan(runtime::Backend& backend, const ir::Graph& graph, const RunOptions& options = {}) {
  auto plan = make_plan(backend, graph, options);
  EXPECT_TRUE(plan.has_value()) << plan.status().to_string();
  return plan ? std::move(*plan) : runtime::Plan{};
}

TEST(CapturedRuns, TheCpuBackendRunsEagerly) {
  const ir::Graph& graph = cnn(2);
  std::unique_ptr<runtime::Executor> executor =
      make_executor(cpu_backend(), graph, cpu_plan(cpu_backend(), graph), CaptureMode::kOn);
  ASSERT_NE(executor, nullptr);
  EXPECT_FALSE(executor->replays_runs());
  EXPECT_NE(executor->capture_fallback().find("cpu backend does not capture"), std::string::npos)
      << executor->capture_fallback();
  const std::vector<Tensor> a = random_inputs(graph, 1);
  const std::vector<Tensor> first = run(*executor, a);
  expect_bitwise_equal(run(*executor, a), first, "second CPU run");
}

TEST(CapturedRuns, EmulatedReplaysEqualEagerRuns) {
  RecordingBackend backend(cpu_backend());
  const ir::Graph& graph = cnn(2);
  expect_replays_equal_eager_runs(backend, graph, cpu_plan(backend, graph));
}

TEST(CapturedRuns, EmulatedReplaysOfMicroBatchedConvolutions) {
  RecordingBackend backend(cpu_backend());
  const ir::Graph& graph = cnn(8);
  RunOptions options;
  options.micro_batches = {{3, -1}, {5, -1}};
  const runtime::Plan plan = cpu_plan(backend, graph, options);
  ASSERT_FALSE(plan.steps.empty());
  EXPECT_EQ(plan.steps[0].micro_batches.size(), 2u);  // the first Conv
  expect_replays_equal_eager_runs(backend, graph, plan);
}

TEST(CapturedRuns, EmulatedRunBoundCapturesAgainWhenBuffersChange) {
  RecordingBackend backend(cpu_backend());
  const ir::Graph& graph = cnn(2);
  expect_changed_buffers_captured_again(backend, graph, cpu_plan(backend, graph));
}

TEST(CapturedRuns, EmulatedOffNeverCaptures) {
  RecordingBackend backend(cpu_backend());
  const ir::Graph& graph = cnn(2);
  expect_off_never_captures(backend, graph, cpu_plan(backend, graph));
}

TEST(CapturedRuns, AFailedCaptureFallsBackToEagerRuns) {
  RecordingBackend backend(cpu_backend());
  backend.fail_end_capture = true;
  const ir::Graph& graph = cnn(2);
  std::unique_ptr<runtime::Executor> executor =
      make_executor(backend, graph, cpu_plan(backend, graph), CaptureMode::kOn);
  ASSERT_NE(executor, nullptr);
  const std::vector<Tensor> a = random_inputs(graph, 1), b = random_inputs(graph, 2);
  const std::vector<Tensor> eager_a = run(*executor, a);
  executor->set_capture_mode(CaptureMode::kOff);
  const std::vector<Tensor> eager_b = run(*executor, b);
  executor->set_capture_mode(CaptureMode::kOn);
  // The capture fails: the run is queued again eagerly and still gives its outputs.
  expect_bitwise_equal(run(*executor, b), eager_b, "the run whose capture failed");
  EXPECT_EQ(backend.counts.begun, 1);
  EXPECT_FALSE(executor->replays_runs());
  EXPECT_NE(executor->capture_fallback().find("emulated capture failure"), std::string::npos)
      << executor->capture_fallback();
  // Later runs are eager: no capture is tried again.
  expect_bitwise_equal(run(*executor, a), eager_a, "a later run");
  EXPECT_EQ(backend.counts.begun, 1);
  EXPECT_EQ(backend.counts.replays, 0);
}

TEST(CapturedRuns, AKernelThatCannotBeCapturedKeepsThePlanEager) {
  RecordingBackend backend(cpu_backend());
  backend.not_capturable = OpKind::kGemm;
  const ir::Graph& graph = cnn(2);
  std::unique_ptr<runtime::Executor> executor =
      make_executor(backend, graph, cpu_plan(backend, graph), CaptureMode::kOn);
  ASSERT_NE(executor, nullptr);
  EXPECT_FALSE(executor->replays_runs());
  EXPECT_NE(executor->capture_fallback().find("Gemm"), std::string::npos) << executor->capture_fallback();
  const std::vector<Tensor> a = random_inputs(graph, 1);
  const std::vector<Tensor> first = run(*executor, a);
  expect_bitwise_equal(run(*executor, a), first, "second run");
  expect_bitwise_equal(run(*executor, a), first, "third run");
  EXPECT_EQ(backend.counts.begun, 0);
  EXPECT_EQ(backend.counts.replays, 0);
}

// ---- the GPU: CUDA graphs ----------------------------------------------------------------------

#ifdef UCUDNN_HAVE_CUDA
// The strict-FP32 GPU backend with its capture calls counted, or why the test skips.
struct Gpu {
  std::unique_ptr<CountingBackend> backend;
  std::string skip_reason;
};

Gpu gpu() {
  const SharedBackend shared = shared_backend(backend_config("cuda_fp32"));
  Gpu g;
  g.skip_reason = shared.skip_reason;
  EXPECT_TRUE(shared.error.is_ok()) << shared.error.to_string();
  if (shared.backend != nullptr) g.backend = std::make_unique<CountingBackend>(*shared.backend);
  return g;
}

#define UCUDNN_GPU_OR_SKIP(g)                                 \
  Gpu g = gpu();                                              \
  if (!g.skip_reason.empty()) GTEST_SKIP() << g.skip_reason;  \
  ASSERT_NE(g.backend, nullptr)

runtime::Plan gpu_plan(runtime::Backend& backend, const ir::Graph& graph, const RunOptions& options = {}) {
  return cpu_plan(backend, graph, options);  // make_plan on the GPU's kernels
}

TEST(CudaGraph, PlainCnnReplaysEqualEagerRuns) {
  UCUDNN_GPU_OR_SKIP(g);
  const ir::Graph& graph = cnn(2);
  expect_replays_equal_eager_runs(*g.backend, graph, gpu_plan(*g.backend, graph));
}

TEST(CudaGraph, MicroBatchedConvolutionsReplayEqualEagerRuns) {
  UCUDNN_GPU_OR_SKIP(g);
  const ir::Graph& graph = cnn(8);
  RunOptions options;  // micro-batches 3 + 5 with two algorithms
  options.micro_batches = {{3, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM},
                           {5, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM}};
  const runtime::Plan plan = gpu_plan(*g.backend, graph, options);
  ASSERT_FALSE(plan.steps.empty());
  EXPECT_EQ(plan.steps[0].micro_batches.size(), 2u);
  expect_replays_equal_eager_runs(*g.backend, graph, plan);
}

// The downsample on stream 1: the side stream joins the capture through the fork and join events.
TEST(CudaGraph, TwoStreamPlanReplaysEqualEagerRuns) {
  UCUDNN_GPU_OR_SKIP(g);
  static const ir::Graph graph = load("tiny_downsample", 2);
  runtime::Plan plan = gpu_plan(*g.backend, graph);
  ASSERT_EQ(ucudnn::optimizer::assign_side_streams(graph, ucudnn::optimizer::side_stream_candidates(graph), SIZE_MAX, &plan), 1);
  ucudnn::optimizer::plan_activation_memory(graph, &plan);
  expect_replays_equal_eager_runs(*g.backend, graph, plan);
}

TEST(CudaGraph, RunBoundCapturesAgainWhenBuffersChange) {
  UCUDNN_GPU_OR_SKIP(g);
  const ir::Graph& graph = cnn(8);
  RunOptions options;
  options.micro_batches = {{3, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM},
                           {5, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM}};
  expect_changed_buffers_captured_again(*g.backend, graph, gpu_plan(*g.backend, graph, options));
}

TEST(CudaGraph, OffNeverCaptures) {
  UCUDNN_GPU_OR_SKIP(g);
  const ir::Graph& graph = cnn(2);
  expect_off_never_captures(*g.backend, graph, gpu_plan(*g.backend, graph));
}
#endif  // UCUDNN_HAVE_CUDA

}  // namespace
}  // namespace ucudnn_test
