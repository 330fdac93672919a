// plan_with_database (see planning.h).
#include "api/planning.h"

#include <cstdio>
#include <optional>

#include "onnx_import/onnx_import.h"
#include "optimizer/bench/benchmark_db.h"
#include "optimizer/passes/passes.h"
#include "runtime/executor/plan_json.h"
#include "runtime/ir/layout.h"
#include "optimizer/bench/benchmarker.h"
#include "optimizer/bench/stored_benchmarker.h"
#include "runtime/executor/cpu_executor.h"
#ifdef UCUDNN_HAVE_CUDA
#include "optimizer/bench/cudnn_benchmarker.h"
#include "runtime/cuda/cuda_context.h"
#endif

namespace ucudnn {

namespace {
size_t cpu_workspace_of(const ir::Graph& graph, const ir::Node& node) {
  return runtime::cpu_step_workspace(graph, node, 0, -1);
}
// In runtime/cuda only Conv takes a workspace (its slice comes from the policy);
// every other CUDA kernel's prepare reports 0 bytes. Asking them would need a
// CUDA context, which planning from the database alone does not have.
size_t cuda_workspace_of(const ir::Graph&, const ir::Node&) { return 0; }
}  // namespace

Expected<ir::Graph> load_graph(const std::string& model_path, const SessionOptions& options, Layout layout) {
  if (layout == Layout::kAuto) return internal_error("load_graph needs a resolved layout (nchw or nhwc)");
  onnx_import::ImportOptions import_options;
  import_options.input_shapes = options.input_shapes;
  import_options.batch = options.batch;
  UCUDNN_ASSIGN_OR_RETURN(ir::Graph graph, onnx_import::load_model(model_path, import_options));
  UCUDNN_ASSIGN_OR_RETURN(optimizer::PassStats passes, optimizer::run_inference_passes(graph));
  if (layout == Layout::kNhwc) UCUDNN_RETURN_IF_ERROR(optimizer::convert_to_channels_last(graph, &passes));
  return graph;
}

Expected<std::vector<Layout>> candidate_layouts(const SessionOptions& options, const std::string& device) {
  if (device != "cuda") {
    if (options.layout == Layout::kNhwc)
      return invalid_argument("--layout nhwc is a GPU layout; the CPU backend runs NCHW (use --layout nchw or auto)");
    return std::vector<Layout>{Layout::kNchw};
  }
  if (options.layout == Layout::kAuto) return std::vector<Layout>{Layout::kNchw, Layout::kNhwc};
  return std::vector<Layout>{options.layout};
}

Layout plan_layout(const runtime::Plan& plan) { return plan.layout == "nhwc" ? Layout::kNhwc : Layout::kNchw; }

std::vector<TensorInfo> describe_values(const ir::Graph& graph, const std::vector<ir::ValueId>& ids) {
  std::vector<TensorInfo> infos;
  for (ir::ValueId id : ids) infos.push_back({graph.value(id).name, graph.value(id).dtype, graph.value(id).shape});
  return infos;
}

std::vector<StepProfile> to_step_profiles(const std::vector<runtime::StepTiming>& timings) {
  std::vector<StepProfile> steps;
  for (const runtime::StepTiming& t : timings) steps.push_back({t.name, runtime::step_op_name(t), t.ms});
  return steps;
}

Expected<runtime::Plan> load_matching_plan(const SessionOptions& options, const ir::Graph& graph,
                                           const std::string& device, const std::string& device_name) {
  if (!options.policy.empty()) return invalid_argument("give either a plan or a policy, not both");
  UCUDNN_ASSIGN_OR_RETURN(runtime::Plan plan, runtime::load_plan(options.plan_path));
  if (plan.layout != ir::graph_layout_name(graph))
    return invalid_argument(options.plan_path + ": the plan runs layout " + plan.layout + ", this session " +
                            ir::graph_layout_name(graph) + "; make the plan again for this --device and --layout");
  UCUDNN_RETURN_IF_ERROR(
      runtime::check_plan_matches(plan, graph, device, device_name).with_context(options.plan_path));
  return plan;
}

Status check_streams(const SessionOptions& options) {
  if (options.streams == 1 || options.streams == 2) return Status::ok();
  return invalid_argument("streams must be 1 or 2, got " + std::to_string(options.streams));
}

Expected<optimizer::PlannerOptions> planner_options(const SessionOptions& options) {
  optimizer::PlannerOptions planner;
  UCUDNN_ASSIGN_OR_RETURN(planner.policy, optimizer::parse_policy(options.policy.empty() ? "undivided" : options.policy));
  UCUDNN_ASSIGN_OR_RETURN(planner.batch_sizes, optimizer::parse_batch_size_policy(options.batch_sizes));
  planner.workspace_bytes = options.workspace_bytes;
  planner.share_workspace = options.share_workspace;
  UCUDNN_RETURN_IF_ERROR(check_streams(options));
  planner.streams = options.streams;
  planner.rebenchmark = options.rebenchmark;
  planner.progress = options.progress;
  return planner;
}

Expected<PlannedModel> plan_model(const std::string& model_path, const std::string& device,
                                  const SessionOptions& options) {
  UCUDNN_ASSIGN_OR_RETURN(std::vector<Layout> layouts, candidate_layouts(options, device));
  UCUDNN_ASSIGN_OR_RETURN(optimizer::PlannerOptions planner, planner_options(options));
  std::optional<PlannedModel> best;
  Status first_error;
  std::string note;
  double seconds = 0;  // planning every layout tried: the optimisation time of this call
  for (Layout layout : layouts) {
    UCUDNN_ASSIGN_OR_RETURN(ir::Graph graph, load_graph(model_path, options, layout));
    auto result = plan_with_database(graph, device, planner, options.benchmark_db, options.strict_fp32);
    if (!result) {
      // With a choice, a layout that cannot be planned (not in the database of a
      // machine without a GPU, a convolution cuDNN rejects in it) is passed over.
      if (layouts.size() == 1) return result.status();
      if (first_error.is_ok()) first_error = result.status();
      note += std::string(note.empty() ? "" : ", ") + layout_name(layout) +
              (result.status().code() == StatusCode::kNotFound ? " not in the database" : " not plannable");
      continue;
    }
    seconds += result->optimize_seconds;
    char line[96];
    std::snprintf(line, sizeof line, "%s %.3f ms", layout_name(layout), result->policy.total_time_ms);
    note += (note.empty() ? "" : ", ") + std::string(line);
    if (!best || result->policy.total_time_ms < best->result.policy.total_time_ms)
      best = PlannedModel{std::move(graph), std::move(*result), layout, ""};
  }
  if (!best) return first_error;
  best->result.optimize_seconds = seconds;
  if (layouts.size() > 1) best->layout_note = "predicted convolution time: " + note;
  return std::move(*best);
}

Expected<optimizer::PlanResult> plan_with_database(const ir::Graph& graph, const std::string& device,
                                                   const optimizer::PlannerOptions& options,
                                                   const std::string& db_path, bool strict_fp32) {
  if (device != "cpu" && device != "cuda")
    return invalid_argument("cannot plan for device '" + device + "': expected cpu or cuda");
  bool have_gpu = false;
#ifdef UCUDNN_HAVE_CUDA
  have_gpu = cuda::device_count() > 0;
#endif
  const std::string path = db_path.empty() ? optimizer::default_db_path() : db_path;
  if (device == "cuda" && !have_gpu && options.rebenchmark)
    return invalid_argument("--rebenchmark for device 'cuda' needs a GPU, and none is present; without one, "
                            "plans come from the recorded database '" + path + "' as it is");
  // A healthy database is kept (--rebenchmark re-measures and overwrites this
  // model's kernels only); a corrupt or foreign one is rebuilt only when asked.
  auto opened = optimizer::BenchmarkDb::open(path, false);
  if (!opened && options.rebenchmark) opened = optimizer::BenchmarkDb::open(path, true);
  if (!opened) return opened.status();
  optimizer::BenchmarkDb db = std::move(*opened);
  if (device == "cpu") {
    std::unique_ptr<optimizer::Benchmarker> benchmarker = optimizer::make_cpu_benchmarker();
    return optimizer::plan_graph(graph, device, options, *benchmarker, &db, cpu_workspace_of);
  }
#ifdef UCUDNN_HAVE_CUDA
  if (have_gpu) {
    UCUDNN_ASSIGN_OR_RETURN(std::unique_ptr<cuda::CudaContext> ctx,
                            cuda::CudaContext::create(0, strict_fp32 ? cuda::MathMode::kFp32 : cuda::MathMode::kTf32));
    std::unique_ptr<optimizer::Benchmarker> benchmarker = optimizer::make_cudnn_benchmarker(*ctx);
    return optimizer::plan_graph(graph, device, options, *benchmarker, &db, cuda_workspace_of);
  }
#endif
  // No GPU here: the device identity and every timing come from the database.
  UCUDNN_ASSIGN_OR_RETURN(optimizer::ConvKernelKey device_key,
                          optimizer::stored_gpu_device_key(db, strict_fp32 ? "fp32" : "tf32"));
  std::unique_ptr<optimizer::Benchmarker> benchmarker = optimizer::make_stored_benchmarker(device_key, path);
  return optimizer::plan_graph(graph, device, options, *benchmarker, &db, cuda_workspace_of);
}

}  // namespace ucudnn
