// plan(), save_plan() and ModelPlan (include/ucudnn/ucudnn.h): a plan made the
// way Session::load makes one, kept with the timings behind it for the report.
#include <utility>

#include "api/device.h"
#include "api/loading.h"
#include "optimizer/report.h"
#include "runtime/plan/plan_json.h"
#include "ucudnn/ucudnn.h"

namespace ucudnn {

struct ModelPlan::Impl {
  std::string model_path;
  optimizer::PlannedModel planned;
  PlanSummary summary;
};

namespace {

Policy public_policy(optimizer::Policy policy) {
  switch (policy) {
    case optimizer::Policy::kUndivided: return Policy::kUndivided;
    case optimizer::Policy::kWd: return Policy::kWd;
    case optimizer::Policy::kWr: break;
  }
  return Policy::kWr;
}

PlanSummary summarize(const optimizer::PlannedModel& planned) {
  const optimizer::PlanResult& result = planned.result;
  const runtime::Plan& plan = result.plan;
  PlanSummary s;
  s.device = plan.device;
  s.device_name = plan.device_name;
  s.policy = public_policy(result.options.policy);
  s.layout = plan.layout == "nhwc" ? Layout::kNhwc : Layout::kNchw;
  s.layout_note = planned.layout_note;
  s.convolution_kernels = static_cast<int>(result.kernels.size());
  s.kernels_benchmarked = result.kernels_benchmarked;
  s.kernels_reused = result.kernels_reused;
  for (const runtime::PlanStep& step : plan.steps) s.divided_steps += step.micro_batches.size() > 1;
  s.side_stream_convolutions = static_cast<int>(result.side_steps.size());
  s.predicted_conv_ms = result.policy.total_time_ms;
  s.optimize_seconds = result.optimize_seconds;
  s.workspace_pool_bytes = plan.workspace_pool_bytes;
  s.largest_workspace_bytes = runtime::largest_step_workspace(plan);
  s.arena_bytes = plan.arena_bytes;
  return s;
}

}  // namespace

ModelPlan::ModelPlan(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ModelPlan::ModelPlan(ModelPlan&& other) noexcept = default;
ModelPlan& ModelPlan::operator=(ModelPlan&& other) noexcept = default;
ModelPlan::~ModelPlan() = default;

const PlanSummary& ModelPlan::summary() const { return impl_->summary; }

std::string ModelPlan::to_json() const { return runtime::plan_to_json(impl_->planned.result.plan, impl_->planned.graph); }

namespace {
// The report's data, with how the layout was chosen (--layout auto on the GPU).
optimizer::ReportData report_data(const optimizer::PlannedModel& planned, const std::string& model_path) {
  return optimizer::build_report(planned.result, planned.graph, model_path, planned.layout_note);
}
}  // namespace

std::string ModelPlan::report_text() const {
  return optimizer::report_text(report_data(impl_->planned, impl_->model_path));
}
std::string ModelPlan::report_json() const {
  return optimizer::report_json(report_data(impl_->planned, impl_->model_path)).dump(2);
}
std::string ModelPlan::report_html() const {
  return optimizer::report_html(report_data(impl_->planned, impl_->model_path));
}

Expected<ModelPlan> plan(const std::string& model_path, const SessionOptions& options) {
  UCUDNN_RETURN_IF_ERROR(check_options(options));
  if (!options.plan_path.empty())
    return invalid_argument("plan() makes a plan; plan_path ('" + options.plan_path + "') is for Session::load");
  UCUDNN_RETURN_IF_ERROR(apply_cpu_thread_options(options));  // the CPU benchmarker measures with the session's threads
  UCUDNN_ASSIGN_OR_RETURN(ir::Graph graph, load_inference_graph(model_path, options));
  auto impl = std::make_unique<ModelPlan::Impl>();
  impl->model_path = model_path;
  UCUDNN_ASSIGN_OR_RETURN(impl->planned, optimizer::plan_model(graph, plan_request(options)));
  impl->summary = summarize(impl->planned);
  return ModelPlan(std::move(impl));
}

Status save_plan(const ModelPlan& plan, const std::string& path) {
  return runtime::save_plan(path, plan.impl_->planned.result.plan, plan.impl_->planned.graph);
}

}  // namespace ucudnn
