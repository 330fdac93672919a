// CudaSession: a Session running on one GPU through runtime/cuda (see
// cuda_session.h). Mirrors CpuSession in session.cc.
#include "api/cuda_session.h"

#include "api/planning.h"
#include "optimizer/bench/cudnn_benchmarker.h"
#include "runtime/cuda/cuda_executor.h"
#include "runtime/executor/plan_json.h"

namespace ucudnn {

namespace {

class CudaSession final : public Session {
 public:
  static Expected<std::unique_ptr<Session>> create(ir::Graph graph, const SessionOptions& options) {
    std::unique_ptr<CudaSession> session(new CudaSession(std::move(graph)));
    UCUDNN_RETURN_IF_ERROR(cuda::check_cuda_support(session->graph_));
    const cuda::MathMode math = options.strict_fp32 ? cuda::MathMode::kFp32 : cuda::MathMode::kTf32;
    UCUDNN_ASSIGN_OR_RETURN(session->ctx_, cuda::CudaContext::create(0, math));
    runtime::Plan plan;
    if (!options.plan_path.empty()) {
      if (!options.policy.empty()) return invalid_argument("give either a plan or a policy, not both");
      UCUDNN_ASSIGN_OR_RETURN(plan, runtime::load_plan(options.plan_path));
      // The GPU name as the cuDNN benchmarker records it in keys and plans.
      const std::string gpu = optimizer::make_cudnn_benchmarker(*session->ctx_)->device_key().device_name;
      UCUDNN_RETURN_IF_ERROR(
          runtime::check_plan_matches(plan, session->graph_, "cuda", gpu).with_context(options.plan_path));
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
    UCUDNN_ASSIGN_OR_RETURN(session->executor_,
                            cuda::CudaExecutor::create(*session->ctx_, session->graph_, std::move(plan)));
    session->inputs_ = describe_values(session->graph_, session->graph_.inputs);
    session->outputs_ = describe_values(session->graph_, session->graph_.outputs);
    return std::unique_ptr<Session>(std::move(session));
  }

  const std::vector<TensorInfo>& inputs() const override { return inputs_; }
  const std::vector<TensorInfo>& outputs() const override { return outputs_; }
  Expected<std::vector<Tensor>> run(const std::vector<Tensor>& inputs) override { return executor_->run(inputs); }
  Expected<std::vector<StepProfile>> profile(const std::vector<Tensor>& inputs) override {
    UCUDNN_ASSIGN_OR_RETURN(std::vector<runtime::StepTiming> timings, executor_->profile(inputs));
    return to_step_profiles(timings);
  }
  MemoryStats memory() const override {
    const runtime::Plan& plan = executor_->plan();
    return {plan.arena_bytes, plan.unplanned_bytes, executor_->weight_bytes(), plan.workspace_pool_bytes};
  }

 private:
  explicit CudaSession(ir::Graph graph) : graph_(std::move(graph)) {}

  ir::Graph graph_;
  std::unique_ptr<cuda::CudaContext> ctx_;  // declared before the executor: destroyed after it
  std::unique_ptr<cuda::CudaExecutor> executor_;
  std::vector<TensorInfo> inputs_, outputs_;
};

}  // namespace

Expected<std::unique_ptr<Session>> create_cuda_session(ir::Graph graph, const SessionOptions& options) {
  return CudaSession::create(std::move(graph), options);
}

}  // namespace ucudnn
