// CudaExecutor and make_cuda_plan: plan checks, the three device allocations,
// per-call preparation (micro-batches included) and the run loop.
#include "runtime/cuda/cuda_executor.h"
#include "runtime/ir/fusion.h"

#include <algorithm>
#include <cstdint>
#include <set>

#include "runtime/cuda/cuda_check.h"
#include "runtime/executor/side_stream.h"
#include "runtime/ir/layout.h"

namespace ucudnn::cuda {

namespace {

constexpr size_t kAlignment = 256;  // cudaMalloc's own alignment; keeps every tensor as aligned

size_t align_up(size_t n) { return (n + kAlignment - 1) / kAlignment * kAlignment; }

Shape with_batch(Shape shape, int64_t micro_batch) {
  if (micro_batch > 0 && !shape.empty()) shape[0] = micro_batch;
  return shape;
}

// The device tensor `t` restricted to rows [begin, begin + count) of dim 0.
DeviceTensor batch_slice(const DeviceTensor& t, int64_t begin, int64_t count) {
  DeviceTensor slice = t;
  const size_t row_bytes = t.shape[0] == 0 ? 0 : t.nbytes() / static_cast<size_t>(t.shape[0]);
  slice.shape[0] = count;
  slice.data = static_cast<std::byte*>(t.data) + row_bytes * static_cast<size_t>(begin);
  return slice;
}

}  // namespace

Status check_cuda_support(const ir::Graph& graph) {
  std::set<std::string> missing;
  for (const ir::Node& node : graph.nodes)
    if (cuda_kernel(node.op).prepare == nullptr) missing.insert(op_name(node.op));
  if (missing.empty()) return Status::ok();
  std::string names;
  for (const std::string& name : missing) names += (names.empty() ? "" : ", ") + name;
  return unsupported("the CUDA backend has no kernel for: " + names + " (model '" + graph.name +
                     "'; run it with --device cpu)");
}

Expected<runtime::Plan> make_cuda_plan(CudaContext& ctx, const ir::Graph& graph, const CudaPlanOptions& options) {
  UCUDNN_RETURN_IF_ERROR(check_cuda_support(graph));
  runtime::Plan plan;
  plan.device = "cuda";
  plan.policy = "undivided";
  plan.layout = ir::graph_layout_name(graph);
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const ir::Node& node = graph.nodes[n];
    runtime::PlanStep step;
    step.node = static_cast<ir::NodeId>(n);
    if (node.op == OpKind::kConv) {
      const int64_t batch = graph.value(node.inputs[0]).shape[0];
      UCUDNN_ASSIGN_OR_RETURN(std::vector<ConvAlgorithmTiming> timings,
                              find_conv_algorithms(ctx, graph, node, batch, options.workspace_limit));
      if (timings.empty())
        return infeasible(node.describe() + ": no cuDNN forward algorithm runs within a workspace of " +
                          format_bytes(options.workspace_limit));
      step.micro_batches = {{batch, timings.front().algorithm}};
      step.workspace_bytes = timings.front().workspace_bytes;
      plan.predicted_conv_ms += timings.front().milliseconds;
    }
    plan.workspace_pool_bytes = std::max(plan.workspace_pool_bytes, step.workspace_bytes);
    plan.steps.push_back(step);
  }
  if (options.streams == 2) {
    // Slices of convolutions that may overlap sit side by side: the pool may grow past the per-layer limit.
    runtime::assign_side_streams(graph, runtime::side_stream_candidates(graph), SIZE_MAX, &plan);
  }
  runtime::plan_activation_memory(graph, &plan);
  return plan;
}

Expected<std::unique_ptr<CudaExecutor>> CudaExecutor::create(CudaContext& ctx, const ir::Graph& graph,
                                                             runtime::Plan plan) {
  std::unique_ptr<CudaExecutor> executor(new CudaExecutor(ctx, graph, std::move(plan)));
  UCUDNN_RETURN_IF_ERROR(executor->build());
  return executor;
}

Status CudaExecutor::prepare_call(const ir::Node& node, int64_t micro_batch, int algorithm, Call* call) {
  std::vector<Shape> src_shapes, dst_shapes;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const ir::ValueId id = node.inputs[i];
    src_shapes.push_back(id == ir::kNoValue ? Shape{} : graph_.value(id).shape);
  }
  for (ir::ValueId id : node.outputs) dst_shapes.push_back(id == ir::kNoValue ? Shape{} : graph_.value(id).shape);
  if (micro_batch > 0) {
    for (size_t i = 0; i < src_shapes.size(); ++i)
      if (ir::is_batch_divided_input(node, i)) src_shapes[i] = with_batch(src_shapes[i], micro_batch);
    dst_shapes[0] = with_batch(dst_shapes[0], micro_batch);
  }
  PrepareArgs args{ctx_, graph_, node, src_shapes, dst_shapes, algorithm};
  UCUDNN_ASSIGN_OR_RETURN(call->state, cuda_kernel(node.op).prepare(args));
  call->state->context = args.describe();
  if (call->state->workspace_bytes() > call->workspace_bytes)
    return invalid_argument(args.describe() + ": algorithm " + std::to_string(algorithm) + " needs " +
                            std::to_string(call->state->workspace_bytes()) + " workspace bytes, the plan gives " +
                            std::to_string(call->workspace_bytes));
  return Status::ok();
}

Status CudaExecutor::build() {
  if (plan_.value_offsets.size() != graph_.values.size() || plan_.steps.size() != graph_.nodes.size())
    return invalid_argument("the plan does not match the model (" + std::to_string(plan_.steps.size()) +
                            " steps for " + std::to_string(graph_.nodes.size()) + " nodes)");
  UCUDNN_RETURN_IF_ERROR(check_cuda_support(graph_));
  UCUDNN_RETURN_IF_ERROR(runtime::check_side_streams(graph_, plan_));

  // Weights: one buffer, every constant at an aligned offset, uploaded once.
  std::vector<size_t> weight_offsets(graph_.values.size(), 0);
  size_t weight_total = 0;
  for (size_t id = 0; id < graph_.values.size(); ++id) {
    if (!graph_.values[id].constant) continue;
    weight_offsets[id] = weight_total;
    weight_total += align_up(graph_.values[id].constant->nbytes());
  }
  UCUDNN_ASSIGN_OR_RETURN(weights_, DeviceBuffer::allocate(weight_total, "weights"));
  UCUDNN_ASSIGN_OR_RETURN(arena_, DeviceBuffer::allocate(plan_.arena_bytes, "activation arena"));
  UCUDNN_ASSIGN_OR_RETURN(workspace_, DeviceBuffer::allocate(plan_.workspace_pool_bytes, "workspace pool"));

  values_.resize(graph_.values.size());
  for (size_t id = 0; id < graph_.values.size(); ++id) {
    const ir::Value& v = graph_.values[id];
    DeviceTensor& t = values_[id];
    t.dtype = v.dtype;
    t.shape = v.shape;
    if (v.constant) {
      t.data = static_cast<std::byte*>(weights_.data()) + weight_offsets[id];
      if (v.constant->nbytes() > 0)
        UCUDNN_CUDA_CHECK(cudaMemcpy(t.data, v.constant->raw(), v.constant->nbytes(), cudaMemcpyHostToDevice),
                          "uploading weight '" + v.name + "'");
    } else if (plan_.value_offsets[id] >= 0) {
      const size_t offset = static_cast<size_t>(plan_.value_offsets[id]);
      if (offset + t.nbytes() > plan_.arena_bytes)
        return invalid_argument("the plan places value '" + v.name + "' outside the arena");
      t.data = static_cast<std::byte*>(arena_.data()) + offset;
    }
  }

  auto* pool = static_cast<std::byte*>(workspace_.data());
  for (const runtime::PlanStep& plan_step : plan_.steps) {
    if (plan_step.node < 0 || static_cast<size_t>(plan_step.node) >= graph_.nodes.size())
      return invalid_argument("the plan refers to node " + std::to_string(plan_step.node) + ", not in the model");
    const ir::Node& node = graph_.nodes[plan_step.node];
    if (plan_step.workspace_offset + plan_step.workspace_bytes > plan_.workspace_pool_bytes)
      return invalid_argument(node.describe() + ": the plan's workspace slice lies outside the pool");

    Step step;
    step.node = &node;
    step.side = plan_step.stream == runtime::kSideStream;
    Call whole;
    for (ir::ValueId id : node.inputs) whole.src.push_back(id == ir::kNoValue ? DeviceTensor{} : values_[id]);
    for (ir::ValueId id : node.outputs) whole.dst.push_back(id == ir::kNoValue ? DeviceTensor{} : values_[id]);
    whole.workspace = pool + plan_step.workspace_offset;
    whole.workspace_bytes = plan_step.workspace_bytes;

    if (plan_step.micro_batches.empty()) {
      UCUDNN_RETURN_IF_ERROR(prepare_call(node, 0, -1, &whole));
      step.calls.push_back(std::move(whole));
    } else {
      // Divided convolution: X (and z), Y are cut along the batch; weights are shared.
      if (node.op != OpKind::kConv)
        return invalid_argument(node.describe() + ": only convolutions can be divided into micro-batches");
      const int64_t batch = graph_.value(node.inputs[0]).shape[0];
      if (!runtime::micro_batches_cover(plan_step.micro_batches, batch))
        return invalid_argument(node.describe() + ": the plan's micro-batch sizes do not sum to the batch " +
                                std::to_string(batch));
      int64_t begin = 0;
      for (const runtime::MicroBatch& m : plan_step.micro_batches) {
        Call call;
        call.src = whole.src;
        call.dst = whole.dst;
        for (size_t i = 0; i < call.src.size(); ++i)
          if (ir::is_batch_divided_input(node, i) && call.src[i].data != nullptr)
            call.src[i] = batch_slice(whole.src[i], begin, m.size);
        call.dst[0] = batch_slice(whole.dst[0], begin, m.size);
        call.workspace = whole.workspace;
        call.workspace_bytes = whole.workspace_bytes;
        UCUDNN_RETURN_IF_ERROR(prepare_call(node, m.size, m.algorithm, &call));
        step.calls.push_back(std::move(call));
        begin += m.size;
      }
    }
    steps_.push_back(std::move(step));
  }
  record_value_refs();
  return prepare_side_stream();
}

Status CudaExecutor::prepare_side_stream() {
  forks_before_.assign(steps_.size() + 1, {});
  joins_before_.assign(steps_.size() + 1, {});
  for (size_t s = 0; s < steps_.size(); ++s) {
    Step& step = steps_[s];
    if (!step.side) continue;
    if (!side_ctx_) {
      UCUDNN_ASSIGN_OR_RETURN(side_ctx_, CudaContext::create(ctx_.device(), ctx_.math()));
    }
    for (cudaEvent_t* event : {&step.forked, &step.done})
      UCUDNN_CUDA_CHECK(cudaEventCreateWithFlags(event, cudaEventDisableTiming),
                        "creating side-stream events for " + step.node->describe());
    const runtime::SideWindow window = runtime::side_window(graph_, static_cast<ir::NodeId>(s));
    forks_before_[static_cast<size_t>(window.fork + 1)].push_back(s);
    joins_before_[static_cast<size_t>(window.join)].push_back(s);
  }
  return Status::ok();
}

void CudaExecutor::record_value_refs() {
  // Bindable: the graph inputs, and each graph output a node writes, the first time it is listed.
  std::vector<bool> bindable(graph_.values.size(), false);
  for (ir::ValueId id : graph_.inputs) bindable[id] = true;
  output_bound_.assign(graph_.outputs.size(), false);
  for (size_t j = 0; j < graph_.outputs.size(); ++j) {
    const ir::ValueId id = graph_.outputs[j];
    if (bindable[id] || graph_.value(id).constant) continue;  // an input, a constant or listed before
    bindable[id] = output_bound_[j] = true;
  }

  refs_.assign(graph_.values.size(), {});
  auto record = [&](size_t s, size_t c, bool dst, const std::vector<ir::ValueId>& ids,
                    const std::vector<DeviceTensor>& tensors) {
    for (size_t slot = 0; slot < ids.size(); ++slot) {
      const ir::ValueId id = ids[slot];
      if (id == ir::kNoValue || !bindable[id]) continue;
      // Non-zero only for a micro-batch's slice (batch_slice).
      const auto offset = static_cast<const std::byte*>(tensors[slot].data) -
                          static_cast<const std::byte*>(values_[id].data);
      refs_[id].push_back({s, c, dst, slot, static_cast<size_t>(offset)});
    }
  };
  for (size_t s = 0; s < steps_.size(); ++s) {
    for (size_t c = 0; c < steps_[s].calls.size(); ++c) {
      const Call& call = steps_[s].calls[c];
      record(s, c, false, steps_[s].node->inputs, call.src);
      record(s, c, true, steps_[s].node->outputs, call.dst);
    }
  }
}

void CudaExecutor::point_values_at(const std::vector<const void*>& inputs, const std::vector<void*>& outputs) {
  auto point = [&](ir::ValueId id, const void* base) {
    for (const ValueRef& ref : refs_[id]) {
      Call& call = steps_[ref.step].calls[ref.call];
      DeviceTensor& t = ref.dst ? call.dst[ref.slot] : call.src[ref.slot];
      // const_cast: an input buffer is only ever read (it sits in src slots).
      t.data = const_cast<std::byte*>(static_cast<const std::byte*>(base)) + ref.offset;
    }
  };
  for (size_t i = 0; i < graph_.inputs.size(); ++i) {
    const ir::ValueId id = graph_.inputs[i];
    point(id, inputs.empty() ? values_[id].data : inputs[i]);
  }
  for (size_t j = 0; j < graph_.outputs.size(); ++j) {
    const ir::ValueId id = graph_.outputs[j];
    if (output_bound_[j]) point(id, outputs.empty() ? values_[id].data : outputs[j]);
  }
}

const void* CudaExecutor::bound_location(ir::ValueId id, const std::vector<const void*>& inputs,
                                         const std::vector<void*>& outputs) const {
  for (size_t i = 0; i < graph_.inputs.size(); ++i)
    if (graph_.inputs[i] == id) return inputs[i];
  for (size_t j = 0; j < graph_.outputs.size(); ++j)
    if (graph_.outputs[j] == id && output_bound_[j]) return outputs[j];
  return values_[id].data;  // a constant, in the weights
}

CudaExecutor::~CudaExecutor() {
  // Errors at teardown have nowhere to go.
  for (cudaEvent_t event : events_) cudaEventDestroy(event);
  for (const Step& step : steps_)
    for (cudaEvent_t event : {step.forked, step.done})
      if (event != nullptr) cudaEventDestroy(event);
}

Status CudaExecutor::copy_inputs_in(const std::vector<Tensor>& inputs) {
  UCUDNN_RETURN_IF_ERROR(runtime::check_run_inputs(graph_, inputs));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ir::Value& v = graph_.value(graph_.inputs[i]);
    const DeviceTensor& dst = values_[graph_.inputs[i]];
    if (dst.nbytes() > 0 && dst.data != nullptr)
      UCUDNN_CUDA_CHECK(cudaMemcpyAsync(dst.data, inputs[i].raw(), dst.nbytes(), cudaMemcpyHostToDevice,
                                        ctx_.stream()),
                        "copying input '" + v.name + "' to the GPU");
  }
  return Status::ok();
}

Status CudaExecutor::run_step(const Step& step, CudaContext& ctx) {
  for (const Call& call : step.calls) {
    Status status = call.state->run(RunArgs{ctx, call.src, call.dst, call.workspace, call.workspace_bytes});
    if (!status.is_ok()) return status.with_context(call.state->context);
  }
  return Status::ok();
}

Status CudaExecutor::run_steps() {
  Status status = queue_steps();
  // After a failure the main stream never waited for the side stream: let it finish before the
  // caller reuses the buffers its steps may still be reading (best effort, the error is already set).
  if (!status.is_ok() && side_ctx_) cudaStreamSynchronize(side_ctx_->stream());
  return status;
}

Status CudaExecutor::queue_steps() {
  for (size_t s = 0; s <= steps_.size(); ++s) {
    for (size_t side : forks_before_[s])
      UCUDNN_CUDA_CHECK(cudaEventRecord(steps_[side].forked, ctx_.stream()), "recording a side-stream fork");
    for (size_t side : joins_before_[s])
      UCUDNN_CUDA_CHECK(cudaStreamWaitEvent(ctx_.stream(), steps_[side].done, 0), "waiting for a side-stream step");
    if (s == steps_.size()) break;
    const Step& step = steps_[s];
    if (!step.side) {
      UCUDNN_RETURN_IF_ERROR(run_step(step, ctx_));
      continue;
    }
    UCUDNN_CUDA_CHECK(cudaStreamWaitEvent(side_ctx_->stream(), step.forked, 0), "waiting for a side-stream fork");
    UCUDNN_RETURN_IF_ERROR(run_step(step, *side_ctx_));
    UCUDNN_CUDA_CHECK(cudaEventRecord(step.done, side_ctx_->stream()), "recording a side-stream step");
  }
  return Status::ok();
}

Expected<std::vector<Tensor>> CudaExecutor::copy_outputs_out() {
  std::vector<Tensor> outputs;
  for (ir::ValueId id : graph_.outputs) {
    const DeviceTensor& src = values_[id];
    UCUDNN_ASSIGN_OR_RETURN(Tensor out, Tensor::allocate(src.dtype, src.shape));
    if (out.nbytes() > 0)
      UCUDNN_CUDA_CHECK(cudaMemcpyAsync(out.raw(), src.data, out.nbytes(), cudaMemcpyDeviceToHost, ctx_.stream()),
                        "copying output '" + graph_.value(id).name + "' from the GPU");
    outputs.push_back(std::move(out));
  }
  return outputs;
}

Expected<std::vector<Tensor>> CudaExecutor::run(const std::vector<Tensor>& inputs) {
  point_values_at({}, {});  // a run_bound before may have left calls pointing at its caller's buffers
  UCUDNN_RETURN_IF_ERROR(copy_inputs_in(inputs));
  UCUDNN_RETURN_IF_ERROR(run_steps());
  UCUDNN_ASSIGN_OR_RETURN(std::vector<Tensor> outputs, copy_outputs_out());
  UCUDNN_RETURN_IF_ERROR(ctx_.synchronize("running model '" + graph_.name + "'"));
  return outputs;
}

Status CudaExecutor::check_bound_buffers(const std::vector<const void*>& inputs,
                                         const std::vector<void*>& outputs) const {
  if (inputs.size() != graph_.inputs.size())
    return invalid_argument("expected " + std::to_string(graph_.inputs.size()) +
                            " input buffers (one per model input), got " + std::to_string(inputs.size()));
  if (outputs.size() != graph_.outputs.size())
    return invalid_argument("expected " + std::to_string(graph_.outputs.size()) +
                            " output buffers (one per model output), got " + std::to_string(outputs.size()));
  auto check = [&](const char* kind, ir::ValueId id, const void* p) -> Status {
    const ir::Value& v = graph_.value(id);
    if (values_[id].nbytes() == 0) return Status::ok();
    const std::string what = std::string("the device buffer for ") + kind + " '" + v.name + "' (" +
                             dtype_name(v.dtype) + shape_to_string(v.shape) + ")";
    if (p == nullptr) return invalid_argument(what + " is null");
    // A host pointer would fail later as an illegal address that poisons the whole context.
    cudaPointerAttributes attributes{};
    const cudaError_t error = cudaPointerGetAttributes(&attributes, p);
    if (error != cudaSuccess) {
      cudaGetLastError();  // not sticky; clear it so the next call does not report it
      return invalid_argument(what + " is not a pointer CUDA knows (" + cudaGetErrorName(error) + ")");
    }
    if (attributes.type == cudaMemoryTypeUnregistered)
      return invalid_argument(what + " points to host memory, not GPU memory");
    if (attributes.type == cudaMemoryTypeDevice && attributes.device != ctx_.device())
      return invalid_argument(what + " is on GPU " + std::to_string(attributes.device) + ", the session runs on GPU " +
                              std::to_string(ctx_.device()));
    return Status::ok();
  };
  for (size_t i = 0; i < inputs.size(); ++i) UCUDNN_RETURN_IF_ERROR(check("input", graph_.inputs[i], inputs[i]));
  for (size_t j = 0; j < outputs.size(); ++j) UCUDNN_RETURN_IF_ERROR(check("output", graph_.outputs[j], outputs[j]));
  return Status::ok();
}

Status CudaExecutor::run_bound(const std::vector<const void*>& inputs, const std::vector<void*>& outputs) {
  UCUDNN_RETURN_IF_ERROR(check_bound_buffers(inputs, outputs));
  point_values_at(inputs, outputs);
  UCUDNN_RETURN_IF_ERROR(run_steps());
  // Outputs no node writes in place: copied from wherever the value is now.
  for (size_t j = 0; j < graph_.outputs.size(); ++j) {
    if (output_bound_[j]) continue;
    const ir::ValueId id = graph_.outputs[j];
    const void* src = bound_location(id, inputs, outputs);
    const size_t bytes = values_[id].nbytes();
    if (bytes > 0 && src != outputs[j])
      UCUDNN_CUDA_CHECK(cudaMemcpyAsync(outputs[j], src, bytes, cudaMemcpyDeviceToDevice, ctx_.stream()),
                        "copying output '" + graph_.value(id).name + "' into its device buffer");
  }
  return ctx_.synchronize("running model '" + graph_.name + "' on device buffers");
}

Expected<std::vector<runtime::StepTiming>> CudaExecutor::profile(const std::vector<Tensor>& inputs) {
  // Boundary events: [0] before the input copies, [1 + s] after part s, for
  // the parts: input copies, each step, output copies.
  const size_t parts = steps_.size() + 2;
  while (events_.size() < parts + 1) {
    cudaEvent_t event = nullptr;
    UCUDNN_CUDA_CHECK(cudaEventCreate(&event), "creating profiling events for model '" + graph_.name + "'");
    events_.push_back(event);
  }
  auto record = [&](size_t boundary) -> Status {
    UCUDNN_CUDA_CHECK(cudaEventRecord(events_[boundary], ctx_.stream()), "recording a profiling event");
    return Status::ok();
  };

  point_values_at({}, {});  // as in run
  UCUDNN_RETURN_IF_ERROR(record(0));
  UCUDNN_RETURN_IF_ERROR(copy_inputs_in(inputs));
  UCUDNN_RETURN_IF_ERROR(record(1));
  for (size_t s = 0; s < steps_.size(); ++s) {
    UCUDNN_RETURN_IF_ERROR(run_step(steps_[s], ctx_));  // side steps too: one stream, each step timed alone
    UCUDNN_RETURN_IF_ERROR(record(s + 2));
  }
  UCUDNN_RETURN_IF_ERROR(copy_outputs_out().status());
  UCUDNN_RETURN_IF_ERROR(record(parts));
  UCUDNN_RETURN_IF_ERROR(ctx_.synchronize("profiling model '" + graph_.name + "'"));

  std::vector<runtime::StepTiming> timings;
  timings.reserve(parts);
  for (size_t part = 0; part < parts; ++part) {
    float ms = 0;
    UCUDNN_CUDA_CHECK(cudaEventElapsedTime(&ms, events_[part], events_[part + 1]), "reading a profiling event");
    runtime::StepTiming t;
    if (part == 0) {
      t = {-1, runtime::kCopyInputsName, OpKind::kCount, static_cast<int>(inputs.size()), 0.0};
    } else if (part == parts - 1) {
      t = {-1, runtime::kCopyOutputsName, OpKind::kCount, static_cast<int>(graph_.outputs.size()), 0.0};
    } else {
      const Step& step = steps_[part - 1];
      t = {plan_.steps[part - 1].node, step.node->name, step.node->op, static_cast<int>(step.calls.size()), 0.0};
    }
    t.ms = ms;
    timings.push_back(std::move(t));
  }
  return timings;
}

}  // namespace ucudnn::cuda
