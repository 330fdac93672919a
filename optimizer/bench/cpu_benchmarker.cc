// The CPU benchmarker: times the CPU convolution algorithms on random data, in
// every direction: a Conv's algorithms through runtime/cpu/conv_algorithms.h, the
// backward ops' (ConvGradData, ConvGradFilter) through their CPU kernels.
#include <algorithm>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <thread>

#include "optimizer/bench/benchmark_db.h"
#include "optimizer/bench/benchmarker.h"
#include "optimizer/bench/interleaved_timing.h"
#include "runtime/cpu/conv_algorithms.h"
#include "runtime/cpu/conv_grad.h"
#include "runtime/cpu/cpu_kernel.h"
#include "runtime/cpu/onednn_conv.h"

namespace ucudnn::optimizer {

namespace {

// A float32 tensor of `shape` with elements uniform in [-1, 1].
Expected<Tensor> random_tensor(const Shape& shape, std::mt19937& rng) {
  UCUDNN_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(DType::kFloat32, shape));
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = dist(rng);
  return t;
}

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  }
  return "unknown CPU";
}

class CpuBenchmarker final : public Benchmarker {
 public:
  explicit CpuBenchmarker(CpuBenchmarkOptions options) : options_(options) {}

  ConvKernelKey device_key() const override {
    ConvKernelKey key;
    key.device_name = "cpu:" + cpu_model_name() + " x" + std::to_string(cpu::num_threads()) + " threads";
    // With oneDNN its version joins the device: timings stored by a build without it (or
    // with another version) lack or differ in its algorithms, so they are measured anew.
    const std::string onednn = cpu::onednn::version();
    if (!onednn.empty()) key.device_name += ", " + onednn;
    // Rows stored by a build with fewer algorithms would leave the new ones untimed, and rows of
    // another timings version mean something else: measured anew.
    key.device_name += ", " + std::to_string(cpu::kNumCpuConvAlgorithms) + " algorithms";
    if (cpu::kCpuConvTimingsVersion > 1) key.device_name += " v" + std::to_string(cpu::kCpuConvTimingsVersion);
    key.math_type = "fp32";
    key.layout = "nchw";
    return key;
  }

  Expected<KernelTimings> measure(const ir::Graph& graph, const ConvKernel& kernel,
                                  const std::vector<int64_t>& sizes) override {
    if (kernel.nodes.empty()) return invalid_argument("CPU benchmark: a kernel without nodes");
    const ir::Node& node = graph.nodes[kernel.nodes.front()];
    if (kernel.direction() == ConvDirection::kForward) {
      const bool constant = node.inputs.size() > 1 && node.inputs[1] != ir::kNoValue &&
                            graph.value(node.inputs[1]).constant.has_value();
      return measure_forward(node, kernel, sizes, constant);
    }
    return measure_backward(node, kernel, sizes);
  }

 private:
  // Algorithm a's measurement from its time (nullopt: it did not run) and workspace, for every a.
  static std::vector<AlgoMeasurement> measurement_row(const std::vector<std::optional<double>>& times,
                                                      const std::vector<std::optional<size_t>>& bytes,
                                                      const char* (*name)(int algorithm)) {
    std::vector<AlgoMeasurement> row;
    for (size_t a = 0; a < times.size(); ++a) {
      AlgoMeasurement m;
      m.algorithm = static_cast<int>(a);
      m.name = name(m.algorithm);
      m.available = times[a].has_value();
      m.time_ms = times[a].value_or(0);
      m.workspace_bytes = bytes[a].value_or(0);
      row.push_back(m);
    }
    return row;
  }

  // One workspace for the algorithms run in turns, of the largest of `bytes` (algorithm a's workspace,
  // nullopt where it does not run) that can be allocated: an algorithm whose workspace is larger is set to
  // nullopt (out of memory: unavailable, not fatal).
  static Expected<Tensor> shared_workspace(std::vector<std::optional<size_t>>& bytes) {
    for (;;) {
      size_t largest = 0;
      for (const std::optional<size_t>& b : bytes) largest = std::max(largest, b.value_or(0));
      Expected<Tensor> workspace = Tensor::allocate(DType::kUInt8, {static_cast<int64_t>(largest)});
      if (workspace || largest == 0) return workspace;
      for (std::optional<size_t>& b : bytes)
        if (b == largest) b.reset();
    }
  }

  // A Conv: the bare convolution of every CPU algorithm (no bias, no fused activation: they
  // cost about the same whichever algorithm runs), prepared as the backend prepares it: with
  // `weights_constant` (W an initializer) oneDNN's weight reorder happens once, untimed.
  // Note [micro-batches read cold data]: X and Y hold the kernel's whole batch, and each run of a
  // micro-batch size takes the next slice of them, as the executor's micro-batches do. Timing one
  // slice again and again keeps it in cache and favours small micro-batches: on the dev VM ResNet-50 at
  // batch 16 (NHWC) had 41 convolution steps divided when planned from such timings, 29 from these.
  Expected<KernelTimings> measure_forward(const ir::Node& node, const ConvKernel& kernel,
                                          const std::vector<int64_t>& sizes, bool weights_constant) {
    KernelTimings timings;
    if (sizes.empty()) return timings;
    std::mt19937 rng(1);
    const int64_t batch = std::max<int64_t>(kernel.x_shape[0], *std::max_element(sizes.begin(), sizes.end()));
    Shape x_full = kernel.x_shape;
    x_full[0] = batch;
    UCUDNN_ASSIGN_OR_RETURN(const cpu::ConvProblem whole, cpu::conv_problem(node, x_full, kernel.w_shape));
    UCUDNN_ASSIGN_OR_RETURN(Tensor x, random_tensor(x_full, rng));
    UCUDNN_ASSIGN_OR_RETURN(Tensor w, random_tensor(kernel.w_shape, rng));
    UCUDNN_ASSIGN_OR_RETURN(Tensor y, Tensor::allocate(DType::kFloat32,
                                                       {batch, whole.out_channels, whole.out_h, whole.out_w}));
    const int64_t x_sample = x.numel() / std::max<int64_t>(batch, 1);
    const int64_t y_sample = y.numel() / std::max<int64_t>(batch, 1);
    for (int64_t size : sizes) {
      Shape x_shape = kernel.x_shape;
      x_shape[0] = size;
      UCUDNN_ASSIGN_OR_RETURN(cpu::ConvProblem problem, cpu::conv_problem(node, x_shape, kernel.w_shape));
      const int64_t slices = std::max<int64_t>(batch / std::max<int64_t>(size, 1), 1);
      std::vector<std::unique_ptr<cpu::PreparedConv>> convs;
      std::vector<std::optional<size_t>> bytes;
      for (int algorithm = 0; algorithm < cpu::kNumCpuConvAlgorithms; ++algorithm) {
        // Note [Winograd for inference]: Winograd rounds differently from the exact algorithms (within 1e-4
        // of a layer's output scale, about 3e-5 measured); where W changes (training) that drifts from
        // PyTorch's FP32 trajectory, as oneDNN's Winograd did when it was offered (it is no longer:
        // cpu_conv_algorithm_available). It is timed for constant weights only, an inference session's, as
        // cuDNN offers its FP32 Winograd.
        const bool inference_only = algorithm == static_cast<int>(cpu::CpuConvAlgorithm::kWinograd4x3);
        convs.push_back(inference_only && !weights_constant
                            ? nullptr
                            : cpu::prepare_conv(problem, algorithm, {}, weights_constant));
        // The plan's workspace is the query's (what a call whose weights may change needs).
        bytes.push_back(convs.back() != nullptr ? std::optional(cpu::conv_workspace_bytes(problem, algorithm))
                                                : std::nullopt);
      }
      UCUDNN_ASSIGN_OR_RETURN(Tensor workspace, shared_workspace(bytes));
      std::vector<std::function<bool()>> runs(convs.size());
      int64_t slice = 0;  // Note [micro-batches read cold data]: each run takes the next slice
      for (size_t a = 0; a < convs.size(); ++a) {
        if (!bytes[a]) continue;
        runs[a] = [&, conv = convs[a].get()] {
          const int64_t first = (slice++ % slices) * size;
          conv->run(x.data<float>() + first * x_sample, w.data<float>(), nullptr, nullptr,
                    y.data<float>() + first * y_sample, workspace.raw());
          return true;
        };
      }
      timings.by_batch[size] = measurement_row(fastest_in_turns(runs, options_), bytes, cpu::cpu_conv_algorithm_name);
    }
    return timings;
  }

  // ConvGradData (dY, W) → dX and ConvGradFilter (X, dY) → dW: every algorithm of the node's
  // own CPU kernel (cpu_kernel(op)), called as the executor calls one micro-batch of it — the
  // batch-divided tensors at the micro-batch, ConvGradFilter's dW whole (Note [fused nodes]).
  Expected<KernelTimings> measure_backward(const ir::Node& node, const ConvKernel& kernel,
                                           const std::vector<int64_t>& sizes) {
    const cpu::CpuKernel& table = cpu::cpu_kernel(node.op);
    if (table.run == nullptr) return unsupported(node.describe() + ": no CPU kernel to time");
    const int count = cpu::cpu_algorithm_count(node.op);
    KernelTimings timings;
    Status first_error;
    bool any_ran = false;
    std::mt19937 rng(1);
    for (int64_t size : sizes) {
      Shape x_shape = kernel.x_shape, y_shape = kernel.y_shape;
      x_shape[0] = y_shape[0] = size;
      const bool data = kernel.direction() == ConvDirection::kBackwardData;
      const std::vector<Shape> src_shapes = data ? std::vector<Shape>{y_shape, kernel.w_shape}
                                                 : std::vector<Shape>{x_shape, y_shape};
      std::vector<Tensor> src;
      for (const Shape& shape : src_shapes) {
        UCUDNN_ASSIGN_OR_RETURN(Tensor t, random_tensor(shape, rng));
        src.push_back(std::move(t));
      }
      UCUDNN_ASSIGN_OR_RETURN(Tensor dst, Tensor::allocate(DType::kFloat32, data ? x_shape : kernel.w_shape));
      const std::vector<const Tensor*> src_ptrs = {&src[0], &src[1]};
      const std::vector<Tensor*> dst_ptrs = {&dst};
      std::vector<std::optional<size_t>> bytes;
      for (int algorithm = 0; algorithm < count; ++algorithm) {
        const size_t b = table.workspace_bytes ? table.workspace_bytes(node, src_shapes, algorithm) : 0;
        bytes.push_back(b == SIZE_MAX ? std::nullopt : std::optional(b));  // SIZE_MAX: does not apply
      }
      UCUDNN_ASSIGN_OR_RETURN(Tensor workspace, shared_workspace(bytes));
      std::vector<std::function<bool()>> runs(bytes.size());
      for (size_t a = 0; a < bytes.size(); ++a) {
        if (!bytes[a]) continue;
        runs[a] = [&, a] {
          const cpu::KernelArgs args{node, src_ptrs, dst_ptrs, workspace.raw(), *bytes[a], static_cast<int>(a)};
          Status status = table.run(args);
          if (!status.is_ok() && first_error.is_ok()) first_error = status;
          return status.is_ok();
        };
      }
      const std::vector<AlgoMeasurement>& row = timings.by_batch[size] =
          measurement_row(fastest_in_turns(runs, options_), bytes, cpu::cpu_conv_grad_algorithm_name);
      for (const AlgoMeasurement& m : row) any_ran = any_ran || m.available;
    }
    // Not one algorithm ran: the kernel itself refuses the node — an error, not a table of
    // unavailable entries.
    if (!any_ran)
      return first_error.is_ok() ? unsupported(node.describe() + ": no CPU algorithm applies") : first_error;
    return timings;
  }

 private:
  CpuBenchmarkOptions options_;
};

}  // namespace

std::unique_ptr<Benchmarker> make_cpu_benchmarker(CpuBenchmarkOptions options) {
  return std::make_unique<CpuBenchmarker>(options);
}

// The algorithm counts the database checks stored rows against (benchmark_db.h): here, beside
// the CPU algorithms this benchmarker measures, as the only optimizer files that ask the CPU backend
// are the benchmarkers.
int algorithm_count(const ConvKernelKey& key) {
  if (key.sm_count == 0) return cpu::cpu_algorithm_count(conv_direction_op(key.direction));
  switch (key.direction) {
    case ConvDirection::kForward: return kGpuForwardAlgorithmIds;
    case ConvDirection::kBackwardData: return kCudnnBackwardDataAlgorithms;
    case ConvDirection::kBackwardFilter: return kCudnnBackwardFilterAlgorithms;
  }
  return 0;
}

int max_algorithm_count() {
  return std::max({cpu::cpu_algorithm_count(OpKind::kConv), cpu::cpu_algorithm_count(OpKind::kConvGradData),
                   cpu::cpu_algorithm_count(OpKind::kConvGradFilter), kGpuForwardAlgorithmIds,
                   kCudnnBackwardDataAlgorithms, kCudnnBackwardFilterAlgorithms});
}

}  // namespace ucudnn::optimizer
