// BatchGroupSession and the decisions around it (batch_group_session.h; Note [batch groups],
// optimizer/batch_groups.h).
#include "api/batch_group_session.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <exception>
#include <new>
#include <random>

#include "api/loading.h"
#include "optimizer/batch_groups.h"
#include "runtime/backends/backends.h"
#include "runtime/plan/plan_json.h"

namespace ucudnn {

namespace {

std::string group_label(int g, int groups, int64_t group_batch) {
  return "batch group " + std::to_string(g + 1) + " of " + std::to_string(groups) + " (samples " +
         std::to_string(g * group_batch) + " to " + std::to_string((g + 1) * group_batch - 1) + ")";
}

// Restores the session's thread count when planning for one thread ends, however it ends.
class SessionThreadsAfter {
 public:
  explicit SessionThreadsAfter(int threads) : threads_(threads) {}
  ~SessionThreadsAfter() { backends::set_num_threads(threads_); }
  SessionThreadsAfter(const SessionThreadsAfter&) = delete;
  SessionThreadsAfter& operator=(const SessionThreadsAfter&) = delete;

 private:
  int threads_;
};

}  // namespace

Expected<int> batch_groups_for(const SessionOptions& options, const ir::Graph& whole) {
  if (options.device != Device::kCpu || !options.plan_path.empty() || options.batch_groups == 1) return 1;
  const bool asked = options.batch_groups > 1;
  int64_t batch = -1;
  for (ir::ValueId id : whole.inputs) {
    const Shape& shape = whole.value(id).shape;
    if (!shape.empty() && (batch < 0 || shape[0] == batch)) {
      batch = shape[0];
      continue;
    }
    if (!asked) return 1;
    return invalid_argument("batch_groups " + std::to_string(options.batch_groups) + ": input '" +
                            whole.value(id).name + "' " + shape_to_string(shape) +
                            " does not share a first dim (the batch) with the other inputs");
  }
  const int threads = backends::num_threads();
  if (!asked) return batch < 2 ? 1 : optimizer::default_batch_groups(batch, threads);
  if (batch < 0) return invalid_argument("batch_groups: the model has no inputs to cut into groups");
  if (batch % options.batch_groups != 0 || batch == options.batch_groups)
    return invalid_argument("batch_groups " + std::to_string(options.batch_groups) + ": the batch " +
                            std::to_string(batch) + " is not a multiple of it with two or more samples per group");
  if (options.batch_groups > threads)
    return invalid_argument("batch_groups " + std::to_string(options.batch_groups) + " needs a thread per group; "
                            "this session has " + std::to_string(threads) + " (raise threads or lower batch_groups)");
  return options.batch_groups;
}

Expected<ir::Graph> import_group_graph(const std::string& model_path, const SessionOptions& options,
                                       const ir::Graph& whole, int groups) {
  const int64_t batch = whole.value(whole.inputs[0]).shape[0];
  const int64_t group_batch = batch / groups;
  SessionOptions group = options;
  if (group.batch == batch) group.batch = group_batch;
  for (auto& [name, shape] : group.input_shapes) {
    if (shape.empty() || shape[0] != batch)
      return unsupported("input_shapes gives '" + name + "' " + shape_to_string(shape) + ", whose first dim is " +
                         "not the batch " + std::to_string(batch) + ": its batch cannot run as groups of samples");
    shape[0] = group_batch;
  }
  Expected<ir::Graph> graph = load_inference_graph(model_path, group);
  if (!graph)
    return unsupported("the model does not load at batch " + std::to_string(group_batch) + " (" +
                       graph.status().message() + "): its batch cannot run as groups of samples");
  UCUDNN_RETURN_IF_ERROR(optimizer::check_samples_independent(whole, *graph, batch, group_batch));
  return graph;
}

Expected<std::unique_ptr<BatchGroupSession>> BatchGroupSession::create(const SessionOptions& options,
                                                                       const ir::Graph& whole, ir::Graph group_graph,
                                                                       int groups) {
  const int64_t group_batch = group_graph.value(group_graph.inputs[0]).shape[0];
  std::unique_ptr<BatchGroupSession> session(new BatchGroupSession(std::move(group_graph), groups, group_batch));
  session->inputs_ = describe_values(whole, whole.inputs);
  session->outputs_ = describe_values(whole, whole.outputs);
  {
    // Planned and prepared for the one thread each group runs on.
    SessionThreadsAfter restore(backends::num_threads());
    backends::set_num_threads(1);
    UCUDNN_ASSIGN_OR_RETURN(optimizer::PlannedModel planned,
                            optimizer::plan_model(session->graph_, plan_request(options)));
    session->graph_ = std::move(planned.graph);
    for (int g = 0; g < groups; ++g) {
      UCUDNN_ASSIGN_OR_RETURN(std::unique_ptr<runtime::Backend> backend,
                              backends::make_backend(backends::DeviceKind::kCpu, backends::GpuMath::kTf32));
      session->backends_.push_back(std::move(backend));
      UCUDNN_ASSIGN_OR_RETURN(std::unique_ptr<runtime::Executor> executor,
                              runtime::Executor::create(*session->backends_.back(), session->graph_,
                                                        planned.result.plan));
      session->executors_.push_back(std::move(executor));
    }
  }
  return session;
}

BatchGroupSession::~BatchGroupSession() = default;

Expected<std::vector<std::vector<Tensor>>> BatchGroupSession::split_inputs(const std::vector<Tensor>& inputs) const {
  if (inputs.size() != inputs_.size())
    return invalid_argument("expected " + std::to_string(inputs_.size()) + " inputs, got " +
                            std::to_string(inputs.size()));
  std::vector<std::vector<Tensor>> parts(static_cast<size_t>(groups_));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorInfo& info = inputs_[i];
    if (inputs[i].dtype() != info.dtype || inputs[i].shape() != info.shape)
      return invalid_argument("input '" + info.name + "' must be " + dtype_name(info.dtype) +
                              shape_to_string(info.shape) + ", got " + inputs[i].describe());
    Shape shape = info.shape;
    shape[0] = group_batch_;
    const size_t bytes = inputs[i].nbytes() / static_cast<size_t>(groups_);
    auto* data = static_cast<char*>(const_cast<void*>(inputs[i].data<void>()));
    for (int g = 0; g < groups_; ++g)
      parts[static_cast<size_t>(g)].push_back(Tensor::view(info.dtype, shape, data + static_cast<size_t>(g) * bytes));
  }
  return parts;
}

Status BatchGroupSession::for_each_group(const std::vector<Tensor>& inputs,
                                         const std::function<Status(int, const std::vector<Tensor>&)>& body) {
  UCUDNN_ASSIGN_OR_RETURN(std::vector<std::vector<Tensor>> parts, split_inputs(inputs));
  std::vector<Status> status(static_cast<size_t>(groups_));
#pragma omp parallel for num_threads(groups_) schedule(static, 1)
  for (int g = 0; g < groups_; ++g) {
    backends::ThreadsOfThisThread alone(1);
    Status& s = status[static_cast<size_t>(g)];
    try {
      s = body(g, parts[static_cast<size_t>(g)]);
    } catch (const std::bad_alloc&) {
      s = out_of_memory("out of host memory");
    } catch (const std::exception& e) {
      s = internal_error(e.what());
    }
  }
  for (int g = 0; g < groups_; ++g)
    if (!status[static_cast<size_t>(g)].is_ok())
      return status[static_cast<size_t>(g)].with_context(group_label(g, groups_, group_batch_));
  return Status::ok();
}

Expected<std::vector<Tensor>> BatchGroupSession::run(const std::vector<Tensor>& inputs) {
  const std::lock_guard<std::mutex> one_run(run_mutex_);  // Note [one run at a time] (include/ucudnn/ucudnn.h)
  std::vector<std::vector<Tensor>> parts(static_cast<size_t>(groups_));
  UCUDNN_RETURN_IF_ERROR(for_each_group(inputs, [&](int g, const std::vector<Tensor>& in) -> Status {
    UCUDNN_ASSIGN_OR_RETURN(parts[static_cast<size_t>(g)], executors_[static_cast<size_t>(g)]->run(in));
    return Status::ok();
  }));
  std::vector<Tensor> outputs;
  for (size_t j = 0; j < outputs_.size(); ++j) {
    UCUDNN_ASSIGN_OR_RETURN(Tensor out, Tensor::allocate_uninitialized(outputs_[j].dtype, outputs_[j].shape));
    const size_t bytes = out.nbytes() / static_cast<size_t>(groups_);
    for (int g = 0; g < groups_; ++g) {
      const Tensor& part = parts[static_cast<size_t>(g)][j];
      if (part.nbytes() != bytes)
        return internal_error(group_label(g, groups_, group_batch_) + " returned output '" + outputs_[j].name +
                              "' as " + part.describe() + ", not a " + std::to_string(groups_) + "th of " +
                              out.describe());
      if (bytes > 0) std::memcpy(out.data<char>() + static_cast<size_t>(g) * bytes, part.data<char>(), bytes);
    }
    outputs.push_back(std::move(out));
  }
  return outputs;
}

Expected<std::vector<StepProfile>> BatchGroupSession::profile(const std::vector<Tensor>& inputs) {
  const std::lock_guard<std::mutex> one_run(run_mutex_);
  std::vector<runtime::StepTiming> first;
  UCUDNN_RETURN_IF_ERROR(for_each_group(inputs, [&](int g, const std::vector<Tensor>& in) -> Status {
    UCUDNN_ASSIGN_OR_RETURN(std::vector<runtime::StepTiming> timings, executors_[static_cast<size_t>(g)]->profile(in));
    if (g == 0) first = std::move(timings);
    return Status::ok();
  }));
  std::vector<StepProfile> steps;
  for (const runtime::StepTiming& t : first) steps.push_back({t.name, runtime::step_op_label(t, graph_), t.ms});
  return steps;
}

MemoryStats BatchGroupSession::memory() const {
  const std::lock_guard<std::mutex> one_run(run_mutex_);  // kernel_bytes: not while a run is in progress
  // The groups share the graph's constants (read in place) and the kernels' converted weights (Note [shared
  // converted weights], runtime/cpu/shared_weights.h): those count once, the rest once per group.
  const runtime::Plan& plan = executors_[0]->plan();
  const auto n = static_cast<size_t>(groups_);
  return {plan.arena_bytes * n,        plan.unplanned_bytes * n,           executors_[0]->weight_bytes(),
          plan.workspace_pool_bytes * n, runtime::largest_step_workspace(plan), executors_[0]->kernel_bytes()};
}

Layout BatchGroupSession::layout() const { return plan_layout(executors_[0]->plan()); }

std::string BatchGroupSession::plan_json() const { return runtime::plan_to_json(executors_[0]->plan(), graph_); }

Status BatchGroupSession::run_on_device(const std::vector<const void*>&, const std::vector<void*>&) {
  return unsupported("run_on_device needs a CUDA session (--device cuda, SessionOptions::device = Device::kCuda); "
                     "this session runs on the CPU");
}

Status BatchGroupSession::set_cuda_graph(CudaGraph mode) {
  if (mode == CudaGraph::kOn)
    return invalid_argument("CUDA graphs (cuda_graph on) need a CUDA session; this session runs on the CPU");
  if (std::string(cuda_graph_name(mode)) == "?")
    return invalid_argument("set_cuda_graph: " + std::to_string(static_cast<int>(mode)) +
                            " is none of CudaGraph's values");
  return Status::ok();
}

Expected<double> median_run_ms(Session& session) {
  std::vector<Tensor> inputs;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (const TensorInfo& info : session.inputs()) {
    const bool half = info.dtype == DType::kFloat16 || info.dtype == DType::kBFloat16;  // a half-precision model
    if (info.dtype != DType::kFloat32 && !half) return unsupported("input '" + info.name + "' is not float32");
    UCUDNN_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(DType::kFloat32, info.shape));
    for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = dist(rng);
    if (half) {
      UCUDNN_ASSIGN_OR_RETURN(t, convert_floating(t, info.dtype));
    }
    inputs.push_back(std::move(t));
  }
  std::vector<double> times;
  for (int r = 0; r < 4; ++r) {
    const auto start = std::chrono::steady_clock::now();
    UCUDNN_RETURN_IF_ERROR(session.run(inputs).status());
    const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
    if (r > 0) times.push_back(took.count());  // the first is the warm-up
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace ucudnn
