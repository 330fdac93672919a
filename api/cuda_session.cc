// CudaSession: a Session running on one GPU through runtime/cuda (see
// cuda_session.h). Mirrors CpuSession in session.cc.
#include "api/cuda_session.h"

#include <optional>

#include "api/executor_session.h"
#include "api/planning.h"
#include "optimizer/bench/cudnn_benchmarker.h"
#include "runtime/cuda/cuda_executor.h"
#include "runtime/executor/plan_json.h"

namespace ucudnn {

namespace {

// The graph and plan a CUDA session runs, in the layout options.layout names
// (kAuto: both planned, the faster-predicted kept; a saved plan fixes its own).
// The model in `layout` with make_cuda_plan's undivided plan.
Expected<GraphAndPlan> plan_undivided(cuda::CudaContext& ctx, const std::string& model_path,
                                      const SessionOptions& options, Layout layout) {
  UCUDNN_ASSIGN_OR_RETURN(ir::Graph graph, load_graph(model_path, options, layout));
  UCUDNN_RETURN_IF_ERROR(cuda::check_cuda_support(graph));
  cuda::CudaPlanOptions plan_options;
  plan_options.workspace_limit = options.workspace_bytes;
  plan_options.streams = options.streams;
  UCUDNN_ASSIGN_OR_RETURN(runtime::Plan plan, cuda::make_cuda_plan(ctx, graph, plan_options));
  return GraphAndPlan{std::move(graph), std::move(plan)};
}

Expected<GraphAndPlan> load_and_plan(cuda::CudaContext& ctx, const std::string& model_path,
                                     const SessionOptions& options) {
  if (!options.plan_path.empty()) {
    UCUDNN_ASSIGN_OR_RETURN(runtime::Plan saved, runtime::load_plan(options.plan_path));
    const Layout layout = plan_layout(saved);
    if (options.layout != Layout::kAuto && options.layout != layout)
      return invalid_argument("the plan '" + options.plan_path + "' runs layout " + saved.layout + ", not " +
                              layout_name(options.layout) + "; drop --layout or make the plan with --layout " +
                              layout_name(options.layout));
    UCUDNN_ASSIGN_OR_RETURN(ir::Graph graph, load_graph(model_path, options, layout));
    UCUDNN_RETURN_IF_ERROR(cuda::check_cuda_support(graph));
    // The GPU name as the cuDNN benchmarker records it in keys and plans.
    const std::string gpu = optimizer::make_cudnn_benchmarker(ctx)->device_key().device_name;
    UCUDNN_ASSIGN_OR_RETURN(runtime::Plan plan, load_matching_plan(options, graph, "cuda", gpu));
    return GraphAndPlan{std::move(graph), std::move(plan)};
  }
  if (!options.policy.empty() && options.policy != "undivided") {
    // wr, wd: the μ-cuDNN optimizer over measured (or stored) cuDNN timings.
    UCUDNN_ASSIGN_OR_RETURN(PlannedModel planned, plan_model(model_path, "cuda", options));
    UCUDNN_RETURN_IF_ERROR(cuda::check_cuda_support(planned.graph));
    return GraphAndPlan{std::move(planned.graph), std::move(planned.result.plan)};
  }
  // undivided: cuDNN's own algorithm search per layer, in each candidate layout;
  // with a choice, a layout that cannot be planned is passed over.
  UCUDNN_ASSIGN_OR_RETURN(std::vector<Layout> layouts, candidate_layouts(options, "cuda"));
  std::optional<GraphAndPlan> best;
  Status first_error;
  for (Layout layout : layouts) {
    auto planned = plan_undivided(ctx, model_path, options, layout);
    if (!planned) {
      if (first_error.is_ok()) first_error = planned.status();
      continue;
    }
    if (!best || planned->plan.predicted_conv_ms < best->plan.predicted_conv_ms) best = std::move(*planned);
  }
  if (!best) return first_error;
  return std::move(*best);
}

class CudaSession final : public ExecutorSession<cuda::CudaExecutor> {
 public:
  static Expected<std::unique_ptr<Session>> create(const std::string& model_path, const SessionOptions& options) {
    const cuda::MathMode math = options.strict_fp32 ? cuda::MathMode::kFp32 : cuda::MathMode::kTf32;
    UCUDNN_ASSIGN_OR_RETURN(std::unique_ptr<cuda::CudaContext> ctx, cuda::CudaContext::create(0, math));
    UCUDNN_ASSIGN_OR_RETURN(GraphAndPlan loaded, load_and_plan(*ctx, model_path, options));
    std::unique_ptr<CudaSession> session(new CudaSession(std::move(loaded.graph)));
    session->ctx_ = std::move(ctx);
    UCUDNN_ASSIGN_OR_RETURN(auto executor,
                            cuda::CudaExecutor::create(*session->ctx_, session->graph_, std::move(loaded.plan)));
    session->attach(std::move(executor));
    return std::unique_ptr<Session>(std::move(session));
  }

  Status run_on_device(const std::vector<const void*>& inputs, const std::vector<void*>& outputs) override {
    return executor_->run_bound(inputs, outputs);
  }

  // The executor uses the context: release it first (the base's members would
  // otherwise outlive ctx_).
  ~CudaSession() override { executor_.reset(); }

 private:
  explicit CudaSession(ir::Graph graph) : ExecutorSession(std::move(graph)) {}

  std::unique_ptr<cuda::CudaContext> ctx_;
};

}  // namespace

Expected<std::unique_ptr<Session>> create_cuda_session(const std::string& model_path, const SessionOptions& options) {
  return CudaSession::create(model_path, options);
}

}  // namespace ucudnn
