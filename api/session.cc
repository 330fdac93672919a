// Session::load and the Session over one executor. The CPU and the GPU take the same
// road: options checked → backend (runtime/cpu or runtime/cuda) → graph (import
// + inference passes + the plan's layout) → plan (made now by
// optimizer::plan_model, or a saved one checked against the graph, the device
// and the GPU) → runtime::Executor over the backend. On the CPU a batch may run
// as groups of samples instead, an executor each (Note [batch groups],
// batch_group_session.h).
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>

#include "api/batch_group_session.h"
#include "api/device.h"
#include "api/loading.h"
#include "optimizer/bench/benchmarker.h"
#include "optimizer/passes/passes.h"
#include "runtime/executor/executor.h"
#include "runtime/plan/plan_json.h"
#include "ucudnn/ucudnn.h"

namespace ucudnn {

namespace {

// The saved plan named by options.plan_path, with `graph` (NCHW) converted to
// the plan's layout; refused, naming the file, when it was made for another
// device, layout, graph or GPU.
Expected<runtime::Plan> load_saved_plan(const SessionOptions& options, const runtime::Backend& backend,
                                        ir::Graph* graph) {
  const std::string& path = options.plan_path;
  UCUDNN_ASSIGN_OR_RETURN(runtime::Plan plan, runtime::load_plan(path));
  if (plan.device != backend.name())
    return invalid_argument(path + ": the plan was made for device '" + plan.device + "', this session runs on '" +
                            backend.name() + "'; make it again with `ucudnn plan --device " + backend.name() + "`");
  if (backend.name() == std::string("cpu")) {
    // The CPU's workspaces depend on the processor, the thread count (oneDNN sizes scratchpads per
    // thread) and the oneDNN build, all in the benchmark's device name the plan records.
    const std::string here = optimizer::make_cpu_benchmarker()->device_key().device_name;
    if (!plan.device_name.empty() && plan.device_name != here)
      return invalid_argument(path + ": the plan was made for '" + plan.device_name + "', this session runs on '" +
                              here + "'; run it with the threads it was made for (--threads), or make it again "
                              "with `ucudnn plan --device cpu`");
  }
  const Layout layout = plan_layout(plan);
  if (options.layout != Layout::kAuto && options.layout != layout)
    return invalid_argument("the plan '" + path + "' runs layout " + plan.layout + ", not " +
                            layout_name(options.layout) + "; drop --layout or make the plan with --layout " +
                            layout_name(options.layout));
  if (layout == Layout::kNhwc) {
    optimizer::PassStats stats;
    UCUDNN_RETURN_IF_ERROR(
        optimizer::convert_to_channels_last_except(*graph, &stats, plan.nchw_convs).with_context(path));
  }
  UCUDNN_RETURN_IF_ERROR(runtime::check_plan_matches(plan, *graph, backend.name(), backend.device_name())
                             .with_context(path));
  return plan;
}

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

// A graph and its plan running on one backend through the executor.
class ExecutorSession final : public Session {
 public:
  static Expected<std::unique_ptr<ExecutorSession>> create(Device device, CudaGraph cuda_graph,
                                                           std::unique_ptr<runtime::Backend> backend,
                                                           ir::Graph graph, runtime::Plan plan) {
    std::unique_ptr<ExecutorSession> session(new ExecutorSession(device, std::move(backend), std::move(graph)));
    // The executor keeps references to the backend and the graph: both live in the session.
    UCUDNN_ASSIGN_OR_RETURN(session->executor_, runtime::Executor::create(*session->backend_, session->graph_,
                                                                          std::move(plan), capture_mode(cuda_graph)));
    session->cuda_graph_ = cuda_graph;
    session->warn_if_eager();
    return session;
  }

  const std::vector<TensorInfo>& inputs() const override { return inputs_; }
  const std::vector<TensorInfo>& outputs() const override { return outputs_; }
  Expected<std::vector<Tensor>> run(const std::vector<Tensor>& inputs) override {
    const std::lock_guard<std::mutex> one_run(run_mutex_);  // Note [one run at a time]
    Expected<std::vector<Tensor>> outputs = executor_->run(inputs);
    warn_if_eager();
    return outputs;
  }

  Expected<std::vector<StepProfile>> profile(const std::vector<Tensor>& inputs) override {
    const std::lock_guard<std::mutex> one_run(run_mutex_);
    UCUDNN_ASSIGN_OR_RETURN(std::vector<runtime::StepTiming> timings, executor_->profile(inputs));
    std::vector<StepProfile> steps;
    for (const runtime::StepTiming& t : timings) steps.push_back({t.name, runtime::step_op_label(t, graph_), t.ms});
    return steps;
  }

  MemoryStats memory() const override {
    const std::lock_guard<std::mutex> one_run(run_mutex_);  // kernel_bytes: not while a run is in progress
    const runtime::Plan& plan = executor_->plan();
    return {plan.arena_bytes, plan.unplanned_bytes, executor_->weight_bytes(), plan.workspace_pool_bytes,
            runtime::largest_step_workspace(plan), executor_->kernel_bytes()};
  }
  Layout layout() const override { return plan_layout(executor_->plan()); }
  std::string plan_json() const override { return runtime::plan_to_json(executor_->plan(), graph_); }
  BatchGroups batch_groups() const override { return {1, 0, batch_groups_note_}; }
  void set_batch_groups_note(std::string note) { batch_groups_note_ = std::move(note); }

  Status run_on_device(const std::vector<const void*>& inputs, const std::vector<void*>& outputs) override {
    if (device_ != Device::kCuda)
      return unsupported("run_on_device needs a CUDA session (--device cuda, SessionOptions::device = "
                         "Device::kCuda); this session runs on the CPU");
    const std::lock_guard<std::mutex> one_run(run_mutex_);
    const Status status = executor_->run_bound(inputs, outputs);
    warn_if_eager();
    return status;
  }

  Status set_cuda_graph(CudaGraph mode) override {
    if (std::string(cuda_graph_name(mode)) == "?")
      return invalid_argument("set_cuda_graph: " + std::to_string(static_cast<int>(mode)) +
                              " is none of CudaGraph's values");
    if (mode == CudaGraph::kOn && device_ != Device::kCuda)
      return invalid_argument("CUDA graphs (cuda_graph on) need a CUDA session; this session runs on the CPU");
    const std::lock_guard<std::mutex> one_run(run_mutex_);
    cuda_graph_ = mode;
    executor_->set_capture_mode(capture_mode(mode));
    warn_if_eager();
    return Status::ok();
  }
  bool cuda_graph_in_use() const override { return executor_->replays_runs(); }

 private:
  // With cuda_graph on, says once on stderr why runs are eager (the plan, or a capture that failed).
  void warn_if_eager() {
    if (cuda_graph_ != CudaGraph::kOn || warned_eager_ || executor_->capture_fallback().empty()) return;
    warned_eager_ = true;
    std::fprintf(stderr, "ucudnn: warning: model '%s' runs without a CUDA graph: %s\n", graph_.name.c_str(),
                 executor_->capture_fallback().c_str());
  }

  ExecutorSession(Device device, std::unique_ptr<runtime::Backend> backend, ir::Graph graph)
      : device_(device),
        backend_(std::move(backend)),
        graph_(std::move(graph)),
        inputs_(describe_values(graph_, graph_.inputs)),
        outputs_(describe_values(graph_, graph_.outputs)) {}

  // Declared in the order they are built; destroyed in reverse, the executor first.
  Device device_;
  std::unique_ptr<runtime::Backend> backend_;
  ir::Graph graph_;
  std::vector<TensorInfo> inputs_, outputs_;
  std::unique_ptr<runtime::Executor> executor_;
  CudaGraph cuda_graph_ = CudaGraph::kAuto;
  bool warned_eager_ = false;
  std::string batch_groups_note_;
  mutable std::mutex run_mutex_;  // Note [one run at a time]
};

std::string format_ms(double ms) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f ms", ms);
  return text;
}

// batch_groups auto (Note [batch groups]): the whole batch's session and the groups' are each run on
// the same random inputs, and the faster is kept; the other is freed. Either keeps both figures in
// its note. The whole batch is kept when either cannot be timed (an input neither float32 nor half).
Expected<std::unique_ptr<Session>> faster_of(std::unique_ptr<ExecutorSession> whole,
                                             std::unique_ptr<BatchGroupSession> grouped) {
  const Expected<double> whole_ms = median_run_ms(*whole);
  const Expected<double> grouped_ms = whole_ms ? median_run_ms(*grouped) : whole_ms;
  if (!whole_ms || !grouped_ms) {
    whole->set_batch_groups_note("not timed: " + grouped_ms.status().message());
    return std::unique_ptr<Session>(std::move(whole));
  }
  const BatchGroups groups = grouped->batch_groups();
  const std::string note = "measured run: whole batch " + format_ms(*whole_ms) + ", " +
                           std::to_string(groups.groups) + " groups of " + std::to_string(groups.group_batch) +
                           " " + format_ms(*grouped_ms);
  if (*grouped_ms < *whole_ms) {
    grouped->set_note(note);
    return std::unique_ptr<Session>(std::move(grouped));
  }
  whole->set_batch_groups_note(note);
  return std::unique_ptr<Session>(std::move(whole));
}

}  // namespace

Expected<std::unique_ptr<Session>> Session::load(const std::string& model_path, const SessionOptions& options) {
  UCUDNN_RETURN_IF_ERROR(check_options(options));
  UCUDNN_RETURN_IF_ERROR(apply_cpu_thread_options(options));
  UCUDNN_ASSIGN_OR_RETURN(std::unique_ptr<runtime::Backend> backend, make_backend(options.device, options.math));
  UCUDNN_ASSIGN_OR_RETURN(ir::Graph graph, load_inference_graph(model_path, options));
  // Before anything is benchmarked: every op of the model has a kernel here.
  UCUDNN_RETURN_IF_ERROR(backend->check_support(graph));
  // Before anything is benchmarked: the memory the least plan needs is available.
  UCUDNN_RETURN_IF_ERROR(runtime::check_model_fits_memory(*backend, graph));
  if (!options.plan_path.empty()) {
    UCUDNN_ASSIGN_OR_RETURN(runtime::Plan plan, load_saved_plan(options, *backend, &graph));
    UCUDNN_ASSIGN_OR_RETURN(std::unique_ptr<ExecutorSession> session,
                            ExecutorSession::create(options.device, options.cuda_graph, std::move(backend),
                                                    std::move(graph), std::move(plan)));
    return std::unique_ptr<Session>(std::move(session));
  }
  // Note [batch groups]: asked for (options.batch_groups > 1), the groups' session alone; under auto, both
  // sessions, the faster kept.
  UCUDNN_ASSIGN_OR_RETURN(const int groups, batch_groups_for(options, graph));
  std::unique_ptr<BatchGroupSession> grouped;
  std::string not_grouped;
  if (groups > 1) {
    Expected<ir::Graph> group_graph = import_group_graph(model_path, options, graph, groups);
    Status made = group_graph.status();
    if (group_graph) {
      Expected<std::unique_ptr<BatchGroupSession>> session =
          BatchGroupSession::create(options, graph, std::move(*group_graph), groups);
      made = session.status();
      if (session) grouped = std::move(*session);
    }
    if (!made.is_ok() && options.batch_groups > 1) return made;
    if (!made.is_ok()) not_grouped = "not cut: " + made.message();
  }
  if (options.batch_groups > 1) return std::unique_ptr<Session>(std::move(grouped));
  UCUDNN_ASSIGN_OR_RETURN(optimizer::PlannedModel planned, optimizer::plan_model(graph, plan_request(options)));
  UCUDNN_ASSIGN_OR_RETURN(std::unique_ptr<ExecutorSession> whole,
                          ExecutorSession::create(options.device, options.cuda_graph, std::move(backend),
                                                  std::move(planned.graph), std::move(planned.result.plan)));
  if (grouped) return faster_of(std::move(whole), std::move(grouped));
  whole->set_batch_groups_note(not_grouped);
  return std::unique_ptr<Session>(std::move(whole));
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
