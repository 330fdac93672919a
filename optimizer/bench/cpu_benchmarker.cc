// The CPU benchmarker: times the CPU convolution algorithms on random data.
#include <algorithm>
#include <chrono>
#include <fstream>
#include <memory>
#include <random>
#include <thread>

#include "optimizer/bench/benchmarker.h"
#include "runtime/cpu/conv_algorithms.h"
#include "runtime/cpu/cpu_kernel.h"
#include "runtime/cpu/onednn_conv.h"

namespace ucudnn::optimizer {

namespace {

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
    key.math_type = "fp32";
    key.layout = "nchw";
    return key;
  }

  Expected<KernelTimings> measure(const ir::Graph& graph, const ConvKernel& kernel,
                                  const std::vector<int64_t>& sizes) override {
    const ir::Node& node = graph.nodes[kernel.nodes.front()];
    KernelTimings timings;
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (int64_t size : sizes) {
      Shape x_shape = kernel.x_shape;
      x_shape[0] = size;
      UCUDNN_ASSIGN_OR_RETURN(cpu::ConvProblem problem, cpu::conv_problem(node, x_shape, kernel.w_shape));
      UCUDNN_ASSIGN_OR_RETURN(Tensor x, Tensor::allocate(DType::kFloat32, x_shape));
      UCUDNN_ASSIGN_OR_RETURN(Tensor w, Tensor::allocate(DType::kFloat32, kernel.w_shape));
      UCUDNN_ASSIGN_OR_RETURN(Tensor y, Tensor::allocate(DType::kFloat32,
                                                         {size, problem.out_channels, problem.out_h, problem.out_w}));
      for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = dist(rng);
      for (int64_t i = 0; i < w.numel(); ++i) w.data<float>()[i] = dist(rng);
      std::vector<AlgoMeasurement>& row = timings.by_batch[size];
      for (int algorithm = 0; algorithm < cpu::kNumCpuConvAlgorithms; ++algorithm) {
        AlgoMeasurement m;
        m.algorithm = algorithm;
        m.name = cpu::cpu_conv_algorithm_name(algorithm);
        if (!cpu::conv_algorithm_applies(problem, algorithm)) {
          m.available = false;
          row.push_back(m);
          continue;
        }
        m.workspace_bytes = cpu::conv_workspace_bytes(problem, algorithm);
        auto workspace = Tensor::allocate(DType::kUInt8, {static_cast<int64_t>(m.workspace_bytes)});
        if (!workspace) {  // out of memory: unavailable, not fatal
          m.available = false;
          row.push_back(m);
          continue;
        }
        std::vector<double> times;
        for (int r = 0; r < options_.warmup + options_.repeats; ++r) {
          const auto start = std::chrono::steady_clock::now();
          cpu::run_conv_algorithm(problem, algorithm, x.data<float>(), w.data<float>(), nullptr, y.data<float>(),
                                  workspace->data<float>());
          const auto stop = std::chrono::steady_clock::now();
          if (r >= options_.warmup) times.push_back(std::chrono::duration<double, std::milli>(stop - start).count());
        }
        std::sort(times.begin(), times.end());
        m.time_ms = times[times.size() / 2];
        row.push_back(m);
      }
    }
    return timings;
  }

 private:
  CpuBenchmarkOptions options_;
};

}  // namespace

std::unique_ptr<Benchmarker> make_cpu_benchmarker(CpuBenchmarkOptions options) {
  return std::make_unique<CpuBenchmarker>(options);
}

}  // namespace ucudnn::optimizer
