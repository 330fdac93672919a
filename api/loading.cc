// load_inference_graph and plan_request (see loading.h): what the device can do comes from its
// backend's capabilities (Note [backend capabilities], runtime/backend/backend.h), found by its name.
#include "api/loading.h"

#include "onnx_import/onnx_import.h"
#include "optimizer/bench/device_benchmarker.h"
#include "optimizer/passes/passes.h"

namespace ucudnn {

namespace {

optimizer::Policy optimizer_policy(Policy policy) {
  switch (policy) {
    case Policy::kUndivided: return optimizer::Policy::kUndivided;
    case Policy::kWd: return optimizer::Policy::kWd;
    case Policy::kWr: break;
  }
  return optimizer::Policy::kWr;
}

optimizer::BatchSizePolicy optimizer_batch_sizes(BatchSizes sizes) {
  switch (sizes) {
    case BatchSizes::kAll: return optimizer::BatchSizePolicy::kAll;
    case BatchSizes::kUndivided: return optimizer::BatchSizePolicy::kUndivided;
    case BatchSizes::kPowerOfTwo: break;
  }
  return optimizer::BatchSizePolicy::kPowerOfTwo;
}

// What the backend of options.device can do; the CPU's for a Device outside the enum (check_options refuses it).
const runtime::BackendCapabilities& capabilities(const SessionOptions& options) {
  const runtime::BackendCapabilities* known = optimizer::device_capabilities(device_name(options.device));
  return known != nullptr ? *known : *optimizer::device_capabilities(device_name(Device::kCpu));
}

std::vector<optimizer::GraphLayout> layouts_to_try(const SessionOptions& options) {
  using optimizer::GraphLayout;
  if (options.layout == Layout::kNhwc) return {GraphLayout::kNhwc};
  // Auto plans both where the device runs both: the GPU, and a CPU build with oneDNN.
  if (options.layout == Layout::kAuto && capabilities(options).runs_channels_last())
    return {GraphLayout::kNchw, GraphLayout::kNhwc};
  return {GraphLayout::kNchw};
}

}  // namespace

Expected<ir::Graph> load_inference_graph(const std::string& model_path, const SessionOptions& options) {
  onnx_import::ImportOptions import_options;
  import_options.input_shapes = options.input_shapes;
  import_options.constant_inputs = options.constant_inputs;
  import_options.batch = options.batch;
  UCUDNN_ASSIGN_OR_RETURN(ir::Graph graph, onnx_import::load_model(model_path, import_options));
  optimizer::InferencePassOptions passes;
  passes.gpu_fusions = capabilities(options).takes_gpu_fusions();
  UCUDNN_RETURN_IF_ERROR(optimizer::run_inference_passes(graph, passes).status());
  return graph;
}

runtime::CaptureMode capture_mode(CudaGraph mode) {
  switch (mode) {
    case CudaGraph::kOff: return runtime::CaptureMode::kOff;
    case CudaGraph::kOn: return runtime::CaptureMode::kOn;
    case CudaGraph::kAuto: break;
  }
  return runtime::CaptureMode::kAuto;
}

optimizer::PlanRequest plan_request(const SessionOptions& options) {
  optimizer::PlanRequest request;
  request.device = device_name(options.device);
  request.planner.policy = optimizer_policy(options.policy);
  request.planner.workspace_bytes =
      options.policy == Policy::kWd ? options.total_workspace_budget : options.kernel_workspace_limit;
  request.planner.batch_sizes = optimizer_batch_sizes(options.batch_sizes);
  request.planner.share_workspace = options.share_workspace;
  request.planner.streams = options.streams;
  request.planner.workspace_in_arena = true;  // Note [workspace in the arena]
  request.planner.zero_copy_views = true;     // Note [views]
  request.planner.residual_in_place = capabilities(options).adds_residual_in_place();  // Note [residual in place]
  request.math_type = math_name(options.math);
  request.layouts = layouts_to_try(options);
  request.db_path = options.benchmark_db;
  request.rebenchmark = options.rebenchmark;
  request.benchmark_devices = options.benchmark_devices;
  request.progress = options.progress;
  return request;
}

std::vector<TensorInfo> describe_values(const ir::Graph& graph, const std::vector<ir::ValueId>& ids) {
  std::vector<TensorInfo> infos;
  for (ir::ValueId id : ids) infos.push_back({graph.value(id).name, graph.value(id).dtype, graph.value(id).shape});
  return infos;
}

Layout plan_layout(const runtime::Plan& plan) { return plan.layout == "nhwc" ? Layout::kNhwc : Layout::kNchw; }

}  // namespace ucudnn
