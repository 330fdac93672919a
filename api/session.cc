// Session: the one place that wires ONNX import, graph passes, planning and an
// executor together behind the public API (include/ucudnn/ucudnn.h).
#include <memory>

#include "api/executor_session.h"
#include "api/planning.h"
#include "onnx_import/onnx_import.h"
#include "runtime/cpu/cpu_kernel.h"
#include "runtime/executor/cpu_executor.h"
#include "ucudnn/ucudnn.h"
#ifdef UCUDNN_HAVE_CUDA
#include "api/cuda_session.h"
#include "runtime/cuda/cuda_context.h"
#endif

namespace ucudnn {

const char* device_name(Device device) { return device == Device::kCuda ? "cuda" : "cpu"; }

#ifdef UCUDNN_HAVE_CUDA
bool cuda_available() { return cuda::device_count() > 0; }
#else
bool cuda_available() { return false; }  // built without the CUDA backend
#endif

namespace {

// The plan a session runs: a saved one, one made now by the optimizer, or the default.
Expected<runtime::Plan> choose_plan(const ir::Graph& graph, const SessionOptions& options) {
  if (!options.plan_path.empty()) return load_matching_plan(options, graph, "cpu", "");
  if (options.policy.empty()) return runtime::make_cpu_plan(graph);
  UCUDNN_ASSIGN_OR_RETURN(optimizer::PlannerOptions planner, planner_options(options));
  UCUDNN_ASSIGN_OR_RETURN(optimizer::PlanResult result,
                          plan_with_database(graph, "cpu", planner, options.benchmark_db));
  return std::move(result.plan);
}

class CpuSession final : public ExecutorSession<runtime::CpuExecutor> {
 public:
  static Expected<std::unique_ptr<Session>> create(ir::Graph graph, const SessionOptions& options) {
    std::unique_ptr<CpuSession> session(new CpuSession(std::move(graph)));
    UCUDNN_ASSIGN_OR_RETURN(runtime::Plan plan, choose_plan(session->graph_, options));
    UCUDNN_ASSIGN_OR_RETURN(auto executor, runtime::CpuExecutor::create(session->graph_, std::move(plan)));
    session->attach(std::move(executor));
    return std::unique_ptr<Session>(std::move(session));
  }

 private:
  explicit CpuSession(ir::Graph graph) : ExecutorSession(std::move(graph)) {}
};

}  // namespace

Expected<std::unique_ptr<Session>> Session::load(const std::string& model_path, const SessionOptions& options) {
  if (options.batch < 1) return invalid_argument("batch must be at least 1, got " + std::to_string(options.batch));
  if (options.threads < 0) return invalid_argument("threads must be 0 (all cores) or positive");
#ifndef UCUDNN_HAVE_CUDA
  if (options.device == Device::kCuda)
    return unsupported("device 'cuda' is not available: this build of ucudnn has no CUDA backend");
#else
  if (options.device == Device::kCuda && !cuda_available())
    return unsupported("device 'cuda' is not available: no CUDA device is present (or no driver)");
#endif
  cpu::set_num_threads(options.threads);

  UCUDNN_ASSIGN_OR_RETURN(ir::Graph graph, load_graph(model_path, options));
#ifdef UCUDNN_HAVE_CUDA
  if (options.device == Device::kCuda) return create_cuda_session(std::move(graph), options);
#endif
  return CpuSession::create(std::move(graph), options);
}

}  // namespace ucudnn
