// Backends for tests and running graphs on them by hand-built plans (see backend_runner.h).
#include "tests/support/backend_runner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <memory>

#include "optimizer/plan_memory.h"
#include "runtime/core/bytes.h"
#include "runtime/cpu/cpu_backend.h"
#include "runtime/executor/executor.h"
#include "runtime/ir/fusion.h"

#ifdef UCUDNN_HAVE_CUDA
#include "runtime/cuda/cuda_backend.h"
#include "runtime/cuda/cuda_context.h"
#endif

namespace ucudnn_test {

using ucudnn::Shape;
using ucudnn::Status;
using ucudnn::Tensor;
namespace ir = ucudnn::ir;
namespace runtime = ucudnn::runtime;

const std::vector<BackendConfig>& backend_configs() {
  static const std::vector<BackendConfig> configs = {
      {"cpu", BackendConfig::Kind::kCpu, false, {1e-5, 1e-5}, {1e-5, 1e-5}, true},
#ifdef UCUDNN_HAVE_CUDA
      {"cuda_fp32", BackendConfig::Kind::kCuda, false, {1e-4, 1e-4}, {2e-5, 1e-4}, false},
      // TF32 keeps 10 mantissa bits of each factor: ~5e-4 relative per product.
      {"cuda_tf32", BackendConfig::Kind::kCuda, true, {1e-4, 1e-4}, {2e-3, 2e-3}, false},
#endif
  };
  return configs;
}

const BackendConfig& backend_config(const std::string& name) {
  for (const BackendConfig& config : backend_configs())
    if (config.name == name) return config;
  ADD_FAILURE() << "no backend config '" << name << "' in this build";
  return backend_configs().front();
}

SharedBackend shared_backend(const BackendConfig& config) {
  // Leaked on purpose: destroying cuDNN and cuBLAS handles after the CUDA runtime's own teardown fails.
  static auto* made = new std::map<std::string, SharedBackend>();
  auto found = made->find(config.name);
  if (found != made->end()) return found->second;
  SharedBackend shared;
  if (config.kind == BackendConfig::Kind::kCpu) {
    shared.backend = ucudnn::cpu::make_cpu_backend().release();
  } else {
#ifdef UCUDNN_HAVE_CUDA
    namespace cuda = ucudnn::cuda;
    if (cuda::device_count() == 0) {
      shared.skip_reason = kNoCudaDevice;
    } else {
      auto backend = cuda::make_cuda_backend(0, config.tf32 ? cuda::MathMode::kTf32 : cuda::MathMode::kFp32);
      if (backend) shared.backend = backend->release();
      else shared.error = backend.status();
    }
#else
    shared.skip_reason = "this build has no CUDA backend (configure with -DUCUDNN_CUDA=ON)";
#endif
  }
  (*made)[config.name] = shared;
  return shared;
}

namespace {

// A backend that fills every buffer it allocates with 0xFF bytes, then is `inner`.
class PoisoningBackend final : public ForwardingBackend {
 public:
  using ForwardingBackend::ForwardingBackend;

  ucudnn::Expected<std::unique_ptr<runtime::Buffer>> allocate(size_t bytes, const std::string& what) override {
    auto buffer = inner_.allocate(bytes, what);
    if (!buffer || bytes == 0) return buffer;
    static const std::vector<unsigned char> poison(size_t{1} << 20, 0xFF);
    auto* data = static_cast<unsigned char*>((*buffer)->data());
    for (size_t done = 0; done < bytes; done += poison.size())
      UCUDNN_RETURN_IF_ERROR(
          inner_.copy_to_device(data + done, poison.data(), std::min(poison.size(), bytes - done), what));
    return buffer;
  }
};

}  // namespace

runtime::Plan undivided_plan(const runtime::Backend& backend, const ir::Graph& graph) {
  runtime::Plan plan;
  plan.device = backend.name();
  plan.device_name = backend.device_name();
  plan.model_fingerprint = runtime::graph_fingerprint(graph);
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    runtime::PlanStep step;
    step.node = static_cast<ir::NodeId>(n);
    plan.steps.push_back(step);
  }
  ucudnn::optimizer::plan_activation_memory(graph, &plan);
  return plan;
}

ucudnn::Expected<runtime::Plan> make_plan(runtime::Backend& backend, const ir::Graph& graph,
                                          const RunOptions& options) {
  runtime::Plan plan = undivided_plan(backend, graph);
  size_t pool = 0;
  for (runtime::PlanStep& step : plan.steps) {
    const ir::Node& node = graph.nodes[static_cast<size_t>(step.node)];
    if (ir::is_convolution(node)) {  // Conv, ConvGradData, ConvGradFilter
      if (!options.micro_batches.empty()) step.micro_batches = options.micro_batches;
      else if (options.conv_algorithm >= 0)
        step.micro_batches = {{graph.value(node.inputs[0]).shape[0], options.conv_algorithm}};
    }
    std::vector<runtime::MicroBatch> calls = step.micro_batches;
    if (calls.empty()) calls.push_back({0, -1});  // size 0: the whole batch
    size_t bytes = 0;
    for (size_t i = 0; i < calls.size(); ++i) {
      const runtime::MicroBatch& call = calls[i];
      // As the executor: an output not cut with the batch (ConvGradFilter's dW) accumulates after the first call.
      const bool accumulate = i > 0 && !ir::is_batch_divided_output(node, 0);
      UCUDNN_ASSIGN_OR_RETURN(std::unique_ptr<runtime::Kernel> kernel,
                              backend.prepare(runtime::kernel_request(graph, node, call.size, call.algorithm,
                                                                      accumulate)));
      if (kernel->workspace_bytes() == std::numeric_limits<size_t>::max())
        return ucudnn::unsupported(node.describe() + ": algorithm " + std::to_string(call.algorithm) +
                                   " does not apply (its workspace query answers SIZE_MAX)");
      bytes = std::max(bytes, kernel->workspace_bytes());
    }
    step.workspace_offset = pool;
    step.workspace_bytes = bytes;
    pool += ucudnn::align_up(bytes);
  }
  plan.workspace_pool_bytes = pool;
  return plan;
}

ucudnn::Expected<std::vector<Tensor>> run_on_backend(runtime::Backend& backend, const ir::Graph& graph,
                                                     const std::vector<Tensor>& inputs, const RunOptions& options) {
  UCUDNN_ASSIGN_OR_RETURN(runtime::Plan plan, make_plan(backend, graph, options));
  PoisoningBackend poisoning(backend);
  UCUDNN_ASSIGN_OR_RETURN(std::unique_ptr<runtime::Executor> executor,
                          runtime::Executor::create(poisoning, graph, std::move(plan)));
  return executor->run(inputs);
}

ucudnn::runtime::Plan whole_steps_cpu_plan(const ucudnn::ir::Graph& graph) {
  static const std::unique_ptr<ucudnn::runtime::Backend> cpu = ucudnn::cpu::make_cpu_backend();
  ucudnn::Expected<ucudnn::runtime::Plan> plan = make_plan(*cpu, graph);
  if (!plan) {
    ADD_FAILURE() << "the CPU plan: " << plan.status().to_string();
    return {};
  }
  return std::move(*plan);
}

}  // namespace ucudnn_test
