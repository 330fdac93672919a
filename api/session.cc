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

const char* layout_name(Layout layout) {
  switch (layout) {
    case Layout::kNchw: return "nchw";
    case Layout::kNhwc: return "nhwc";
    case Layout::kAuto: break;
  }
  return "auto";
}

#ifdef UCUDNN_HAVE_CUDA
bool cuda_available() { return cuda::device_count() > 0; }
#else
bool cuda_available() { return false; }  // built without the CUDA backend
#endif

namespace {

// The graph and plan a CPU session runs: a saved plan, one made now by the
// optimizer, or the default. The CPU runs NCHW only.
Expected<GraphAndPlan> load_and_plan(const std::string& model_path, const SessionOptions& options) {
  UCUDNN_RETURN_IF_ERROR(candidate_layouts(options, "cpu").status());
  if (!options.policy.empty()) {
    UCUDNN_ASSIGN_OR_RETURN(PlannedModel planned, plan_model(model_path, "cpu", options));
    return GraphAndPlan{std::move(planned.graph), std::move(planned.result.plan)};
  }
  UCUDNN_ASSIGN_OR_RETURN(ir::Graph graph, load_graph(model_path, options, Layout::kNchw));
  if (!options.plan_path.empty()) {
    UCUDNN_ASSIGN_OR_RETURN(runtime::Plan plan, load_matching_plan(options, graph, "cpu", ""));
    return GraphAndPlan{std::move(graph), std::move(plan)};
  }
  UCUDNN_ASSIGN_OR_RETURN(runtime::Plan plan, runtime::make_cpu_plan(graph));
  return GraphAndPlan{std::move(graph), std::move(plan)};
}

class CpuSession final : public ExecutorSession<runtime::CpuExecutor> {
 public:
  static Expected<std::unique_ptr<Session>> create(const std::string& model_path, const SessionOptions& options) {
    UCUDNN_ASSIGN_OR_RETURN(GraphAndPlan loaded, load_and_plan(model_path, options));
    std::unique_ptr<CpuSession> session(new CpuSession(std::move(loaded.graph)));
    UCUDNN_ASSIGN_OR_RETURN(auto executor, runtime::CpuExecutor::create(session->graph_, std::move(loaded.plan)));
    session->attach(std::move(executor));
    return std::unique_ptr<Session>(std::move(session));
  }

  Status run_on_device(const std::vector<const void*>&, const std::vector<void*>&) override {
    return unsupported("run_on_device needs a CUDA session (--device cuda, SessionOptions::device = "
                       "Device::kCuda); this session runs on the CPU");
  }

 private:
  explicit CpuSession(ir::Graph graph) : ExecutorSession(std::move(graph)) {}
};

// run_on_device's GpuTensors against the model's inputs() or outputs().
Status check_gpu_tensors(const char* kind, const std::vector<TensorInfo>& infos,
                         const std::vector<GpuTensor>& tensors) {
  if (tensors.size() != infos.size())
    return invalid_argument("expected " + std::to_string(infos.size()) + " " + kind + " GPU tensors, got " +
                            std::to_string(tensors.size()));
  for (size_t i = 0; i < infos.size(); ++i)
    if (tensors[i].dtype() != infos[i].dtype || tensors[i].shape() != infos[i].shape)
      return invalid_argument(std::string(kind) + " '" + infos[i].name + "' must be " + dtype_name(infos[i].dtype) +
                              shape_to_string(infos[i].shape) + ", got " + tensors[i].describe());
  return Status::ok();
}

}  // namespace

Expected<std::unique_ptr<Session>> Session::load(const std::string& model_path, const SessionOptions& options) {
  if (options.batch < 1) return invalid_argument("batch must be at least 1, got " + std::to_string(options.batch));
  if (options.threads < 0) return invalid_argument("threads must be 0 (all cores) or positive");
  UCUDNN_RETURN_IF_ERROR(check_streams(options));
#ifndef UCUDNN_HAVE_CUDA
  if (options.device == Device::kCuda)
    return unsupported("device 'cuda' is not available: this build of ucudnn has no CUDA backend");
#else
  if (options.device == Device::kCuda && !cuda_available())
    return unsupported("device 'cuda' is not available: no CUDA device is present (or no driver)");
#endif
  cpu::set_num_threads(options.threads);

#ifdef UCUDNN_HAVE_CUDA
  if (options.device == Device::kCuda) return create_cuda_session(model_path, options);
#endif
  return CpuSession::create(model_path, options);
}

Status Session::run_on_device(const std::vector<GpuTensor>& in, std::vector<GpuTensor>& out) {
  UCUDNN_RETURN_IF_ERROR(check_gpu_tensors("input", inputs(), in));
  UCUDNN_RETURN_IF_ERROR(check_gpu_tensors("output", outputs(), out));
  std::vector<const void*> in_data;
  std::vector<void*> out_data;
  for (const GpuTensor& t : in) in_data.push_back(t.data());
  for (const GpuTensor& t : out) out_data.push_back(t.data());
  return run_on_device(in_data, out_data);
}

}  // namespace ucudnn
