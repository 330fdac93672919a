// CudaSession: a Session running on one GPU through runtime/cuda (see
// cuda_session.h). Mirrors CpuSession in session.cc.
#include "api/cuda_session.h"

#include "api/executor_session.h"
#include "api/planning.h"
#include "optimizer/bench/cudnn_benchmarker.h"
#include "runtime/cuda/cuda_executor.h"

namespace ucudnn {

namespace {

class CudaSession final : public ExecutorSession<cuda::CudaExecutor> {
 public:
  static Expected<std::unique_ptr<Session>> create(ir::Graph graph, const SessionOptions& options) {
    std::unique_ptr<CudaSession> session(new CudaSession(std::move(graph)));
    UCUDNN_RETURN_IF_ERROR(cuda::check_cuda_support(session->graph_));
    const cuda::MathMode math = options.strict_fp32 ? cuda::MathMode::kFp32 : cuda::MathMode::kTf32;
    UCUDNN_ASSIGN_OR_RETURN(session->ctx_, cuda::CudaContext::create(0, math));
    runtime::Plan plan;
    if (!options.plan_path.empty()) {
      // The GPU name as the cuDNN benchmarker records it in keys and plans.
      const std::string gpu = optimizer::make_cudnn_benchmarker(*session->ctx_)->device_key().device_name;
      UCUDNN_ASSIGN_OR_RETURN(plan, load_matching_plan(options, session->graph_, "cuda", gpu));
    } else if (options.policy.empty() || options.policy == "undivided") {
      cuda::CudaPlanOptions plan_options;
      plan_options.workspace_limit = options.workspace_bytes;
      UCUDNN_ASSIGN_OR_RETURN(plan, cuda::make_cuda_plan(*session->ctx_, session->graph_, plan_options));
    } else {  // wr, wd: the μ-cuDNN optimizer over measured (or stored) cuDNN timings
      UCUDNN_ASSIGN_OR_RETURN(optimizer::PlannerOptions planner, planner_options(options));
      UCUDNN_ASSIGN_OR_RETURN(optimizer::PlanResult result,
                              plan_with_database(session->graph_, "cuda", planner, options.benchmark_db,
                                                 options.strict_fp32));
      plan = std::move(result.plan);
    }
    UCUDNN_ASSIGN_OR_RETURN(auto executor,
                            cuda::CudaExecutor::create(*session->ctx_, session->graph_, std::move(plan)));
    session->attach(std::move(executor));
    return std::unique_ptr<Session>(std::move(session));
  }

  // The executor uses the context: release it first (the base's members would
  // otherwise outlive ctx_).
  ~CudaSession() override { executor_.reset(); }

 private:
  explicit CudaSession(ir::Graph graph) : ExecutorSession(std::move(graph)) {}

  std::unique_ptr<cuda::CudaContext> ctx_;
};

}  // namespace

Expected<std::unique_ptr<Session>> create_cuda_session(ir::Graph graph, const SessionOptions& options) {
  return CudaSession::create(std::move(graph), options);
}

}  // namespace ucudnn
