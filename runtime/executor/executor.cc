// Executor: plan checks, the three allocations, per-call preparation
// (micro-batches included) and the run loop over a Backend.
#include "runtime/executor/executor.h"

#include <cstdint>

#include "runtime/core/bytes.h"
#include "runtime/executor/side_stream.h"
#include "runtime/ir/fusion.h"

namespace ucudnn::runtime {

namespace {

// `t` restricted to rows [begin, begin + count) of dim 0.
TensorRef batch_slice(const TensorRef& t, int64_t begin, int64_t count) {
  TensorRef slice = t;
  const size_t row_bytes = t.shape[0] == 0 ? 0 : t.nbytes() / static_cast<size_t>(t.shape[0]);
  slice.shape[0] = count;
  slice.data = static_cast<std::byte*>(t.data) + row_bytes * static_cast<size_t>(begin);
  return slice;
}

std::string bytes_text(size_t bytes) { return std::to_string(bytes) + " bytes"; }

}  // namespace

Expected<std::unique_ptr<Executor>> Executor::create(Backend& backend, const ir::Graph& graph, Plan plan) {
  std::unique_ptr<Executor> executor(new Executor(backend, graph, std::move(plan)));
  UCUDNN_RETURN_IF_ERROR(executor->build());
  return executor;
}

Executor::~Executor() = default;

size_t Executor::allocated_bytes() const {
  size_t bytes = 0;
  for (const auto* buffer : {&weights_, &arena_, &workspace_})
    if (*buffer) bytes += (*buffer)->bytes();
  return bytes;
}

Status Executor::build() {
  UCUDNN_RETURN_IF_ERROR(check_plan());
  UCUDNN_RETURN_IF_ERROR(backend_.check_support(graph_));
  UCUDNN_RETURN_IF_ERROR(place_values());
  UCUDNN_RETURN_IF_ERROR(prepare_steps());
  record_value_refs();
  return prepare_side_stream();
}

Status Executor::check_plan() const {
  if (plan_.device != backend_.name())
    return invalid_argument("the plan was made for device '" + plan_.device + "', this session runs on '" +
                            backend_.name() + "'");
  if (plan_.value_offsets.size() != graph_.values.size() || plan_.steps.size() != graph_.nodes.size())
    return invalid_argument("the plan does not match the model (" + std::to_string(plan_.steps.size()) +
                            " steps for " + std::to_string(graph_.nodes.size()) + " nodes, " +
                            std::to_string(plan_.value_offsets.size()) + " value offsets for " +
                            std::to_string(graph_.values.size()) + " values)");
  UCUDNN_RETURN_IF_ERROR(check_activation_memory(graph_, plan_));
  for (size_t s = 0; s < plan_.steps.size(); ++s) {
    const PlanStep& step = plan_.steps[s];
    if (step.node != static_cast<ir::NodeId>(s))
      return invalid_argument("the plan's step " + std::to_string(s) + " runs node " + std::to_string(step.node) +
                              "; steps must run the model's nodes in order");
    const ir::Node& node = graph_.nodes[s];
    size_t end = 0;
    if (!checked_add(step.workspace_offset, step.workspace_bytes, &end) || end > plan_.workspace_pool_bytes)
      return invalid_argument(node.describe() + ": the plan's workspace slice (offset " +
                              std::to_string(step.workspace_offset) + ", " + bytes_text(step.workspace_bytes) +
                              ") lies outside the pool of " + bytes_text(plan_.workspace_pool_bytes));
    if (step.micro_batches.empty()) continue;
    if (node.op != OpKind::kConv)
      return invalid_argument(node.describe() + ": only convolutions can be divided into micro-batches");
    const int64_t batch = graph_.value(node.inputs[0]).shape[0];
    if (!micro_batches_cover(step.micro_batches, batch))
      return invalid_argument(node.describe() + ": the plan's micro-batch sizes do not sum to the batch " +
                              std::to_string(batch));
  }
  return check_side_streams(graph_, plan_);
}

Status Executor::place_values() {
  // Weights: in place on a host backend; else one buffer, every constant at an aligned offset, uploaded once.
  std::vector<size_t> weight_offsets(graph_.values.size(), 0);
  size_t weight_total = 0;
  for (size_t id = 0; id < graph_.values.size(); ++id) {
    if (!graph_.values[id].constant) continue;
    weight_offsets[id] = weight_total;
    const size_t bytes = graph_.values[id].constant->nbytes();
    weight_bytes_ += bytes;
    weight_total += align_up(bytes);
  }
  const bool upload = !backend_.is_host_memory();
  if (upload) {
    UCUDNN_ASSIGN_OR_RETURN(weights_, backend_.allocate(weight_total, "weights"));
    weight_bytes_ = weight_total;
  }
  UCUDNN_ASSIGN_OR_RETURN(arena_, backend_.allocate(plan_.arena_bytes, "activation arena"));
  UCUDNN_ASSIGN_OR_RETURN(workspace_, backend_.allocate(plan_.workspace_pool_bytes, "workspace pool"));

  values_.resize(graph_.values.size());
  for (size_t id = 0; id < graph_.values.size(); ++id) {
    const ir::Value& v = graph_.values[id];
    TensorRef& t = values_[id];
    t.dtype = v.dtype;
    t.shape = v.shape;
    if (v.constant) {
      // const_cast: constants sit only in src slots; kernels never write their inputs.
      void* host = const_cast<void*>(v.constant->raw());
      t.data = upload ? static_cast<std::byte*>(weights_->data()) + weight_offsets[id] : host;
      if (upload && v.constant->nbytes() > 0)
        UCUDNN_RETURN_IF_ERROR(backend_.copy_to_device(t.data, host, v.constant->nbytes(), "weight '" + v.name + "'"));
    } else if (plan_.value_offsets[id] >= 0) {
      t.data = static_cast<std::byte*>(arena_->data()) + plan_.value_offsets[id];
    }
  }
  return upload ? backend_.synchronize("uploading the weights of model '" + graph_.name + "'") : Status::ok();
}

Status Executor::prepare_call(const ir::Node& node, int64_t micro_batch, int algorithm, Call* call) {
  UCUDNN_ASSIGN_OR_RETURN(call->kernel, backend_.prepare(kernel_request(graph_, node, micro_batch, algorithm)));
  const size_t needed = call->kernel->workspace_bytes();
  if (needed > call->workspace_bytes)
    return invalid_argument(node.describe() + ": " +
                            (micro_batch > 0 ? "a micro-batch of " + std::to_string(micro_batch) + " with " : "") +
                            "algorithm " + std::to_string(algorithm) + " needs " + bytes_text(needed) +
                            " of workspace, the plan gives " + bytes_text(call->workspace_bytes));
  return Status::ok();
}

Status Executor::prepare_steps() {
  const bool two_streams = backend_.max_streams() >= 2;
  auto* pool = static_cast<std::byte*>(workspace_->data());
  for (const PlanStep& plan_step : plan_.steps) {
    const ir::Node& node = graph_.nodes[plan_step.node];
    Step step;
    step.node = &node;
    step.stream = two_streams && plan_step.stream == kSideStream ? kSideStream : kMainStream;
    Call whole;
    for (ir::ValueId id : node.inputs) whole.src.push_back(id == ir::kNoValue ? TensorRef{} : values_[id]);
    for (ir::ValueId id : node.outputs) whole.dst.push_back(id == ir::kNoValue ? TensorRef{} : values_[id]);
    whole.workspace = pool == nullptr ? nullptr : pool + plan_step.workspace_offset;
    whole.workspace_bytes = plan_step.workspace_bytes;

    if (plan_step.micro_batches.empty()) {
      UCUDNN_RETURN_IF_ERROR(prepare_call(node, 0, -1, &whole));
      step.calls.push_back(std::move(whole));
    } else {
      // Divided convolution: X (and z), Y are cut along the batch; weights are shared.
      int64_t begin = 0;
      for (const MicroBatch& m : plan_step.micro_batches) {
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
  return Status::ok();
}

Status Executor::prepare_side_stream() {
  forks_before_.assign(steps_.size() + 1, {});
  joins_before_.assign(steps_.size() + 1, {});
  bool any = false;
  for (size_t s = 0; s < steps_.size(); ++s) {
    Step& step = steps_[s];
    if (step.stream != kSideStream) continue;
    if (!any) UCUDNN_RETURN_IF_ERROR(backend_.use_streams(2));
    any = true;
    UCUDNN_ASSIGN_OR_RETURN(step.forked, backend_.create_event());
    UCUDNN_ASSIGN_OR_RETURN(step.joined, backend_.create_event());
    const SideWindow window = side_window(graph_, static_cast<ir::NodeId>(s));
    forks_before_[static_cast<size_t>(window.fork + 1)].push_back(s);
    joins_before_[static_cast<size_t>(window.join)].push_back(s);
  }
  return Status::ok();
}

void Executor::record_value_refs() {
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
                    const std::vector<TensorRef>& tensors) {
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

void Executor::point_values_at(const std::vector<const void*>& inputs, const std::vector<void*>& outputs) {
  auto point = [&](ir::ValueId id, const void* base) {
    for (const ValueRef& ref : refs_[id]) {
      Call& call = steps_[ref.step].calls[ref.call];
      TensorRef& t = ref.dst ? call.dst[ref.slot] : call.src[ref.slot];
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

const void* Executor::bound_location(ir::ValueId id, const std::vector<const void*>& inputs,
                                     const std::vector<void*>& outputs) const {
  for (size_t i = 0; i < graph_.inputs.size(); ++i)
    if (graph_.inputs[i] == id) return inputs[i];
  for (size_t j = 0; j < graph_.outputs.size(); ++j)
    if (graph_.outputs[j] == id && output_bound_[j]) return outputs[j];
  return values_[id].data;  // a constant, in the weights
}

Status Executor::copy_inputs_in(const std::vector<Tensor>& inputs) {
  UCUDNN_RETURN_IF_ERROR(check_run_inputs(graph_, inputs));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorRef& dst = values_[graph_.inputs[i]];
    if (dst.nbytes() > 0 && dst.data != nullptr)
      UCUDNN_RETURN_IF_ERROR(backend_.copy_to_device(dst.data, inputs[i].raw(), dst.nbytes(),
                                                     "input '" + graph_.value(graph_.inputs[i]).name + "'"));
  }
  return Status::ok();
}

Status Executor::run_step(const Step& step, int stream) {
  for (const Call& call : step.calls) {
    Status status = call.kernel->run(KernelIo{call.src, call.dst, call.workspace, call.workspace_bytes, stream});
    if (!status.is_ok()) return status.with_context(step.node->describe());
  }
  return Status::ok();
}

Status Executor::run_steps() {
  Status status = queue_steps();
  // After a failure stream 0 never waited for stream 1: let it finish before the caller
  // reuses the buffers its steps may still be reading (best effort, the error is already set).
  if (!status.is_ok()) (void)backend_.synchronize("stopping after an error");
  return status;
}

Status Executor::queue_steps() {
  for (size_t s = 0; s <= steps_.size(); ++s) {
    for (size_t side : forks_before_[s]) UCUDNN_RETURN_IF_ERROR(backend_.record(*steps_[side].forked, kMainStream));
    for (size_t side : joins_before_[s]) UCUDNN_RETURN_IF_ERROR(backend_.wait(kMainStream, *steps_[side].joined));
    if (s == steps_.size()) break;
    const Step& step = steps_[s];
    if (step.stream == kMainStream) {
      UCUDNN_RETURN_IF_ERROR(run_step(step, kMainStream));
      continue;
    }
    UCUDNN_RETURN_IF_ERROR(backend_.wait(kSideStream, *step.forked));
    UCUDNN_RETURN_IF_ERROR(run_step(step, kSideStream));
    UCUDNN_RETURN_IF_ERROR(backend_.record(*step.joined, kSideStream));
  }
  return Status::ok();
}

Expected<std::vector<Tensor>> Executor::copy_outputs_out() {
  std::vector<Tensor> outputs;
  for (ir::ValueId id : graph_.outputs) {
    const TensorRef& src = values_[id];
    UCUDNN_ASSIGN_OR_RETURN(Tensor out, Tensor::allocate(src.dtype, src.shape));
    if (out.nbytes() > 0)
      UCUDNN_RETURN_IF_ERROR(
          backend_.copy_to_host(out.raw(), src.data, out.nbytes(), "output '" + graph_.value(id).name + "'"));
    outputs.push_back(std::move(out));
  }
  return outputs;
}

Expected<std::vector<Tensor>> Executor::run(const std::vector<Tensor>& inputs) {
  point_values_at({}, {});  // a run_bound before may have left calls pointing at its caller's buffers
  UCUDNN_RETURN_IF_ERROR(copy_inputs_in(inputs));
  UCUDNN_RETURN_IF_ERROR(run_steps());
  UCUDNN_ASSIGN_OR_RETURN(std::vector<Tensor> outputs, copy_outputs_out());
  UCUDNN_RETURN_IF_ERROR(backend_.synchronize("running model '" + graph_.name + "'"));
  return outputs;
}

Status Executor::check_bound_buffers(const std::vector<const void*>& inputs,
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
    return backend_.check_device_pointer(p, what);
  };
  for (size_t i = 0; i < inputs.size(); ++i) UCUDNN_RETURN_IF_ERROR(check("input", graph_.inputs[i], inputs[i]));
  for (size_t j = 0; j < outputs.size(); ++j) UCUDNN_RETURN_IF_ERROR(check("output", graph_.outputs[j], outputs[j]));
  return Status::ok();
}

Status Executor::run_bound(const std::vector<const void*>& inputs, const std::vector<void*>& outputs) {
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
      UCUDNN_RETURN_IF_ERROR(
          backend_.copy_on_device(outputs[j], src, bytes, "output '" + graph_.value(id).name + "'"));
  }
  return backend_.synchronize("running model '" + graph_.name + "' on device buffers");
}

Expected<std::vector<StepTiming>> Executor::profile(const std::vector<Tensor>& inputs) {
  // Boundary events: [0] before the input copies, [1 + s] after part s, for
  // the parts: input copies, each step, output copies.
  const size_t parts = steps_.size() + 2;
  while (profile_events_.size() < parts + 1) {
    UCUDNN_ASSIGN_OR_RETURN(std::unique_ptr<Event> event, backend_.create_event());
    profile_events_.push_back(std::move(event));
  }
  auto record = [&](size_t boundary) { return backend_.record(*profile_events_[boundary], kMainStream); };

  point_values_at({}, {});  // as in run
  UCUDNN_RETURN_IF_ERROR(record(0));
  UCUDNN_RETURN_IF_ERROR(copy_inputs_in(inputs));
  UCUDNN_RETURN_IF_ERROR(record(1));
  for (size_t s = 0; s < steps_.size(); ++s) {
    UCUDNN_RETURN_IF_ERROR(run_step(steps_[s], kMainStream));  // side steps too: each step timed alone
    UCUDNN_RETURN_IF_ERROR(record(s + 2));
  }
  UCUDNN_RETURN_IF_ERROR(copy_outputs_out().status());
  UCUDNN_RETURN_IF_ERROR(record(parts));
  UCUDNN_RETURN_IF_ERROR(backend_.synchronize("profiling model '" + graph_.name + "'"));

  std::vector<StepTiming> timings;
  timings.reserve(parts);
  for (size_t part = 0; part < parts; ++part) {
    StepTiming t;
    if (part == 0) {
      t = {-1, kCopyInputsName, OpKind::kCount, static_cast<int>(inputs.size()), 0.0};
    } else if (part == parts - 1) {
      t = {-1, kCopyOutputsName, OpKind::kCount, static_cast<int>(graph_.outputs.size()), 0.0};
    } else {
      const Step& step = steps_[part - 1];
      t = {plan_.steps[part - 1].node, step.node->name, step.node->op, static_cast<int>(step.calls.size()), 0.0};
    }
    UCUDNN_ASSIGN_OR_RETURN(t.ms, backend_.elapsed_ms(*profile_events_[part], *profile_events_[part + 1]));
    timings.push_back(std::move(t));
  }
  return timings;
}

}  // namespace ucudnn::runtime
