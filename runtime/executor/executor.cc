// Executor: the three allocations, per-call preparation (micro-batches included)
// and the run loop over a Backend, after the plan checks (runtime/plan/plan_checks.h).
#include "runtime/executor/executor.h"

#include <algorithm>
#include <cstdint>
#include <new>
#include <set>
#include <stdexcept>

#include "runtime/core/bytes.h"
#include "runtime/ir/fusion.h"
#include "runtime/plan/plan_checks.h"
#include "runtime/plan/side_stream.h"
#include "runtime/plan/views.h"

namespace ucudnn::runtime {

namespace {

// `t` restricted to rows [begin, begin + count) of dim 0.
TensorRef batch_slice(const TensorRef& t, int64_t begin, int64_t count) {
  TensorRef slice = t;
  const size_t row_bytes = t.shape[0] == 0 ? 0 : t.nbytes() / static_cast<size_t>(t.shape[0]);
  slice.shape[0] = count;
  // Integer arithmetic: a value of an io_bound plan has no address until run_bound binds it (null
  // here), and only the slice's offset from its start matters then (record_value_refs).
  slice.data = reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(t.data) + row_bytes * static_cast<size_t>(begin));
  return slice;
}

std::string bytes_text(size_t bytes) { return std::to_string(bytes) + " bytes"; }

// `f()`, with a host allocation failure (std::bad_alloc; std::length_error from a container asked for
// more than it can hold) turned into kOutOfMemory: bad sizes end as a Status, never as an abort.
template <typename F>
auto catching_bad_alloc(const std::string& what, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return out_of_memory(what + ": out of host memory (std::bad_alloc)");
  } catch (const std::length_error& e) {
    return out_of_memory(what + ": a host container could not grow (" + e.what() + ")");
  }
}

// Σ bytes of the values `ids` (their sizes checked by check_value_sizes), saturating.
size_t values_bytes(const ir::Graph& graph, const std::vector<ir::ValueId>& ids) {
  size_t bytes = 0;
  for (ir::ValueId id : ids)
    bytes = saturating_add(bytes, static_cast<size_t>(shape_numel(graph.value(id).shape)) *
                                      dtype_size(graph.value(id).dtype));
  return bytes;
}

std::string size_text(size_t bytes) { return bytes == SIZE_MAX ? "more than 16 EiB" : format_bytes(bytes); }

// OK when `needed` bytes fit in the backend's available memory; else kOutOfMemory: "<who> X (<parts>),
// Y available on <device>; <what to do>".
Status check_fits(const Backend& backend, const std::string& who, size_t needed, const std::string& parts) {
  UCUDNN_ASSIGN_OR_RETURN(const size_t available, backend.available_memory_bytes());
  if (needed <= available) return Status::ok();
  const std::string where = backend.is_host_memory()
                                ? std::string("the CPU (host memory)")
                                : std::string(backend.name()) + " '" + backend.device_name() + "'";
  return out_of_memory(who + " " + size_text(needed) + " (" + parts + "), " + format_bytes(available) +
                       " available on " + where +
                       "; use a smaller batch (--batch) or workspace limit (--workspace), or free memory");
}

}  // namespace

Expected<std::unique_ptr<Executor>> Executor::create(Backend& backend, const ir::Graph& graph, Plan plan,
                                                     CaptureMode capture) {
  return catching_bad_alloc("loading model '" + graph.name + "'", [&]() -> Expected<std::unique_ptr<Executor>> {
    std::unique_ptr<Executor> executor(new Executor(backend, graph, std::move(plan), capture));
    UCUDNN_RETURN_IF_ERROR(executor->build());
    return executor;
  });
}

Executor::~Executor() = default;

size_t Executor::allocated_bytes() const {
  size_t bytes = 0;
  for (const auto* buffer : {&weights_, &arena_, &workspace_})
    if (*buffer) bytes += (*buffer)->bytes();
  return bytes;
}

size_t Executor::kernel_bytes() const {
  std::set<const void*> counted;
  size_t bytes = 0;
  for (const Step& step : steps_)
    for (const Call& call : step.calls) {
      const KeptBuffer kept = call.kernel ? call.kernel->kept() : KeptBuffer{};
      if (kept.id != nullptr && counted.insert(kept.id).second) bytes = saturating_add(bytes, kept.bytes);
    }
  return bytes;
}

Status Executor::build() {
  UCUDNN_RETURN_IF_ERROR(check_plan(graph_, plan_, backend_.name()));
  UCUDNN_RETURN_IF_ERROR(backend_.check_support(graph_));
  UCUDNN_ASSIGN_OR_RETURN(const WeightLayout weights, lay_out_weights());
  UCUDNN_RETURN_IF_ERROR(check_memory(weights));
  UCUDNN_RETURN_IF_ERROR(place_values(weights));
  UCUDNN_RETURN_IF_ERROR(prepare_steps());
  record_value_refs();
  UCUDNN_RETURN_IF_ERROR(prepare_side_stream());
  captured_ = std::make_unique<CapturedRuns>(backend_, capture_mode_, why_not_capturable());
  return Status::ok();
}

std::string Executor::why_not_capturable() const {
  if (!backend_.supports_capture()) return std::string("the ") + backend_.name() + " backend does not capture runs";
  for (const Step& step : steps_)
    for (const Call& call : step.calls)
      if (!call.kernel->capturable())
        return step.node->describe() + " cannot be captured: its kernel waits for the device while it runs "
                                       "(a value checked on the host) or copies from host memory";
  return "";
}

Expected<Executor::WeightLayout> Executor::lay_out_weights() const {
  WeightLayout layout;
  layout.offsets.assign(graph_.values.size(), 0);
  for (size_t id = 0; id < graph_.values.size(); ++id) {
    const ir::Value& v = graph_.values[id];
    if (!v.constant) continue;
    UCUDNN_ASSIGN_OR_RETURN(const size_t bytes, checked_nbytes(v.constant->dtype(), v.constant->shape(),
                                                               "constant '" + v.name + "'"));
    layout.offsets[id] = layout.buffer_bytes;
    size_t aligned = 0;
    if (!checked_align_up(bytes, kBufferAlignment, &aligned) ||
        !checked_add(layout.buffer_bytes, aligned, &layout.buffer_bytes))
      return out_of_memory("the weights of model '" + graph_.name + "' total more bytes than memory can address");
    layout.bytes += bytes;  // <= buffer_bytes: no overflow
  }
  return layout;
}

Status Executor::check_memory(const WeightLayout& weights) const {
  const bool upload = !backend_.is_host_memory();
  // On a host backend the constants are used in place, and the outputs each run allocates are host memory too.
  const size_t outputs = upload ? 0 : values_bytes(graph_, graph_.outputs);
  const size_t weight_bytes = upload ? weights.buffer_bytes : 0;
  const size_t needed = saturating_add(saturating_add(plan_.arena_bytes, plan_.workspace_pool_bytes),
                                       saturating_add(weight_bytes, outputs));
  const std::string parts = "activation arena " + size_text(plan_.arena_bytes) + ", workspace pool " +
                            size_text(plan_.workspace_pool_bytes) + ", weights " +
                            (upload ? size_text(weight_bytes) : format_bytes(weights.bytes) + " in place") +
                            (upload ? "" : ", outputs " + size_text(outputs));
  return check_fits(backend_, "model '" + graph_.name + "': the plan needs", needed, parts);
}

Status check_run_inputs(const ir::Graph& graph, const std::vector<Tensor>& inputs) {
  if (inputs.size() != graph.inputs.size())
    return invalid_argument("expected " + std::to_string(graph.inputs.size()) + " inputs, got " +
                            std::to_string(inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ir::Value& v = graph.value(graph.inputs[i]);
    if (inputs[i].dtype() != v.dtype || inputs[i].shape() != v.shape)
      return invalid_argument("input '" + v.name + "' must be " + dtype_name(v.dtype) + shape_to_string(v.shape) +
                              ", got " + inputs[i].describe());
  }
  return Status::ok();
}

Status check_model_fits_memory(const Backend& backend, const ir::Graph& graph) {
  UCUDNN_RETURN_IF_ERROR(ir::check_value_sizes(graph).with_context("model '" + graph.name + "'"));
  const bool upload = !backend.is_host_memory();
  // The inputs are all alive at the first step, the outputs at the last: whatever the plan, its arena
  // holds either set at once (and on a host backend the outputs a run returns are host memory too).
  const size_t inputs = values_bytes(graph, graph.inputs), outputs = values_bytes(graph, graph.outputs);
  size_t weights = 0;
  for (const ir::Value& v : graph.values)
    if (v.constant) weights = saturating_add(weights, v.constant->nbytes());
  const size_t needed = saturating_add(saturating_add(std::max(inputs, outputs), upload ? 0 : outputs),
                                       upload ? weights : 0);
  const std::string parts = "inputs " + size_text(inputs) + ", outputs " + size_text(outputs) +
                            (upload ? ", weights " + size_text(weights) : std::string());
  return check_fits(backend, "model '" + graph.name + "' needs at least", needed, parts);
}

Status Executor::place_values(const WeightLayout& weights) {
  // Weights: in place on a host backend; else one buffer, every constant at an aligned offset, uploaded once.
  weight_bytes_ = weights.bytes;
  const bool upload = !backend_.is_host_memory();
  if (upload) {
    UCUDNN_ASSIGN_OR_RETURN(weights_, backend_.allocate(weights.buffer_bytes, "weights"));
    weight_bytes_ = weights.buffer_bytes;
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
      t.data = upload ? static_cast<std::byte*>(weights_->data()) + weights.offsets[id] : host;
      if (upload && v.constant->nbytes() > 0)
        UCUDNN_RETURN_IF_ERROR(backend_.copy_to_device(t.data, host, v.constant->nbytes(), "weight '" + v.name + "'"));
    } else if (plan_.value_offsets[id] >= 0) {
      t.data = static_cast<std::byte*>(arena_->data()) + plan_.value_offsets[id];
    }
  }
  return upload ? backend_.synchronize("uploading the weights of model '" + graph_.name + "'") : Status::ok();
}

Status Executor::prepare_call(const ir::Node& node, int64_t micro_batch, int algorithm, bool accumulate,
                              Call* call) {
  UCUDNN_ASSIGN_OR_RETURN(call->kernel,
                          backend_.prepare(kernel_request(graph_, node, micro_batch, algorithm, accumulate)));
  const size_t needed = call->kernel->workspace_bytes();
  if (needed == SIZE_MAX)  // the kernels' "does not apply" (or a size past what memory can address)
    return invalid_argument(node.describe() + ": " +
                            (micro_batch > 0 ? "for a micro-batch of " + std::to_string(micro_batch) + ", " : "") +
                            "the plan's algorithm " + std::to_string(algorithm) +
                            " does not apply to this call (no workspace size); make the plan again");
  if (needed > call->workspace_bytes)
    return invalid_argument(node.describe() + ": " +
                            (micro_batch > 0 ? "a micro-batch of " + std::to_string(micro_batch) + " with " : "") +
                            "algorithm " + std::to_string(algorithm) + " needs " + bytes_text(needed) +
                            " of workspace, the plan gives " + bytes_text(call->workspace_bytes));
  return Status::ok();
}

Status Executor::prepare_steps() {
  const bool two_streams = backend_.max_streams() >= 2;
  // The workspaces' base: the pool, or the arena (Note [workspace in the arena]).
  auto* pool = static_cast<std::byte*>(plan_.workspace_in_arena ? arena_->data() : workspace_->data());
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
    if (is_view_node(node) && !whole.dst.empty() && whole.dst[0].data != nullptr &&
        whole.dst[0].data == whole.src[0].data) {  // Note [views]: the output is the input's bytes
      steps_.push_back(std::move(step));
      continue;
    }

    if (plan_step.micro_batches.empty()) {
      UCUDNN_RETURN_IF_ERROR(prepare_call(node, 0, -1, false, &whole));
      step.calls.push_back(std::move(whole));
    } else {
      // Divided convolution: X (and z), Y are cut along the batch; weights are shared. An output that
      // is not cut (ConvGradFilter's dW) is written by the first call and added to by the others.
      int64_t begin = 0;
      for (const MicroBatch& m : plan_step.micro_batches) {
        Call call;
        call.src = whole.src;
        call.dst = whole.dst;
        for (size_t i = 0; i < call.src.size(); ++i)
          if (ir::is_batch_divided_input(node, i) && call.src[i].dtype != DType::kUndefined)  // present
            call.src[i] = batch_slice(whole.src[i], begin, m.size);
        if (ir::is_batch_divided_output(node, 0)) call.dst[0] = batch_slice(whole.dst[0], begin, m.size);
        call.workspace = whole.workspace;
        call.workspace_bytes = whole.workspace_bytes;
        const bool accumulate = begin > 0 && !ir::is_batch_divided_output(node, 0);
        UCUDNN_RETURN_IF_ERROR(prepare_call(node, m.size, m.algorithm, accumulate, &call));
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
      const uintptr_t offset =
          reinterpret_cast<uintptr_t>(tensors[slot].data) - reinterpret_cast<uintptr_t>(values_[id].data);
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

Status Executor::run_steps(bool bound, const std::vector<const void*>& inputs, const std::vector<void*>& outputs) {
  Status status = captured_->run(bound, inputs, outputs, [this] { return queue_steps(); });
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
      if (step_callback_ && captured_->mode() == CaptureMode::kOff) UCUDNN_RETURN_IF_ERROR(step_callback_(s));
      continue;
    }
    UCUDNN_RETURN_IF_ERROR(backend_.wait(kSideStream, *step.forked));
    UCUDNN_RETURN_IF_ERROR(run_step(step, kSideStream));
    UCUDNN_RETURN_IF_ERROR(backend_.record(*step.joined, kSideStream));
  }
  return Status::ok();
}

bool Executor::reads_inputs_in_place() const {
  return backend_.is_host_memory() && !captured_->replaying();
}

std::vector<const void*> Executor::input_pointers(const std::vector<Tensor>& inputs) {
  std::vector<const void*> pointers;
  for (const Tensor& t : inputs) pointers.push_back(t.raw());
  return pointers;
}

Expected<std::vector<Tensor>> Executor::copy_outputs_out(const std::vector<const void*>& inputs) {
  std::vector<Tensor> outputs;
  for (ir::ValueId id : graph_.outputs) {
    const TensorRef& src = values_[id];
    UCUDNN_ASSIGN_OR_RETURN(Tensor out, Tensor::allocate_uninitialized(src.dtype, src.shape));  // overwritten now
    const void* from = src.data;  // an output that is a graph input read in place is copied from there
    for (size_t i = 0; i < inputs.size(); ++i)
      if (graph_.inputs[i] == id) from = inputs[i];
    if (out.nbytes() > 0)
      UCUDNN_RETURN_IF_ERROR(
          backend_.copy_to_host(out.raw(), from, out.nbytes(), "output '" + graph_.value(id).name + "'"));
    outputs.push_back(std::move(out));
  }
  return outputs;
}

Expected<std::vector<Tensor>> Executor::run(const std::vector<Tensor>& inputs) {
  return catching_bad_alloc("running model '" + graph_.name + "'", [&] { return run_once(inputs); });
}

Status Executor::copy_unbound_outputs(const std::vector<const void*>& inputs, const std::vector<void*>& outputs) {
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
  return Status::ok();
}

Status Executor::check_not_io_bound(const char* what) const {
  if (!plan_.io_bound) return Status::ok();
  return invalid_argument(std::string(what) + " of model '" + graph_.name +
                          "': its plan keeps the inputs and outputs in the caller's buffers (io_bound); "
                          "run it with run_bound");
}

// Note [host runs in place]: on a host backend (Backend::is_host_memory) run and profile read the
// caller's input tensors where they lie, as run_bound does, instead of copying them into the arena
// first (a ResNet's input at batch 16 is 9.6 MB: its copy took 0.5 to 1.2 ms of MobileNetV3's 20 at
// batch 16 on the device host). Nothing writes over a graph input (Note [in-place pointwise],
// Note [views]), so they are only read. The outputs are still copied out of the arena (classifiers'
// are small; the test harness's poisoned arena then shows an output no kernel wrote). Not where runs
// replay a capture (a test backend's emulated one: CapturedRuns would capture again for every new
// input tensor); the CPU itself never captures.
Expected<std::vector<Tensor>> Executor::run_once(const std::vector<Tensor>& inputs) {
  UCUDNN_RETURN_IF_ERROR(check_not_io_bound("run"));
  std::vector<const void*> in;
  if (reads_inputs_in_place()) {
    UCUDNN_RETURN_IF_ERROR(check_run_inputs(graph_, inputs));
    in = input_pointers(inputs);
    point_values_at(in, {});
  } else {
    point_values_at({}, {});  // a run_bound before may have left calls pointing at its caller's buffers
    UCUDNN_RETURN_IF_ERROR(copy_inputs_in(inputs));
  }
  UCUDNN_RETURN_IF_ERROR(run_steps(false, {}, {}));
  UCUDNN_ASSIGN_OR_RETURN(std::vector<Tensor> outputs, copy_outputs_out(in));
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
  UCUDNN_RETURN_IF_ERROR(queue_bound(inputs, outputs));
  return backend_.synchronize("running model '" + graph_.name + "' on device buffers");
}

Status Executor::queue_bound(const std::vector<const void*>& inputs, const std::vector<void*>& outputs) {
  return catching_bad_alloc("running model '" + graph_.name + "' on device buffers",
                            [&] { return queue_bound_once(inputs, outputs); });
}

Status Executor::queue_bound_once(const std::vector<const void*>& inputs, const std::vector<void*>& outputs) {
  UCUDNN_RETURN_IF_ERROR(check_bound_buffers(inputs, outputs));
  point_values_at(inputs, outputs);
  UCUDNN_RETURN_IF_ERROR(run_steps(true, inputs, outputs));
  return copy_unbound_outputs(inputs, outputs);
}

Expected<std::vector<StepTiming>> Executor::profile(const std::vector<Tensor>& inputs) {
  return catching_bad_alloc("profiling model '" + graph_.name + "'", [&] { return profile_once(inputs); });
}

Expected<std::vector<StepTiming>> Executor::profile_once(const std::vector<Tensor>& inputs) {
  UCUDNN_RETURN_IF_ERROR(check_not_io_bound("profile"));
  if (reads_inputs_in_place()) {  // Note [host runs in place], as run
    UCUDNN_RETURN_IF_ERROR(check_run_inputs(graph_, inputs));
    const std::vector<const void*> in = input_pointers(inputs);
    point_values_at(in, {});
    return profile_parts([] { return Status::ok(); }, 0, [&] { return copy_outputs_out(in).status(); });
  }
  point_values_at({}, {});  // as in run
  return profile_parts([&] { return copy_inputs_in(inputs); }, static_cast<int>(inputs.size()),
                       [&] { return copy_outputs_out({}).status(); });
}

Expected<std::vector<StepTiming>> Executor::profile_bound(const std::vector<const void*>& inputs,
                                                          const std::vector<void*>& outputs) {
  return catching_bad_alloc("profiling model '" + graph_.name + "' on device buffers",
                            [&]() -> Expected<std::vector<StepTiming>> {
                              UCUDNN_RETURN_IF_ERROR(check_bound_buffers(inputs, outputs));
                              point_values_at(inputs, outputs);
                              return profile_parts([] { return Status::ok(); }, 0,
                                                   [&] { return copy_unbound_outputs(inputs, outputs); });
                            });
}

Expected<std::vector<StepTiming>> Executor::profile_parts(const std::function<Status()>& copy_in, int inputs,
                                                          const std::function<Status()>& copy_out) {
  // Boundary events: [0] before the input copies, [1 + s] after part s, for
  // the parts: input copies, each step, output copies.
  const size_t parts = steps_.size() + 2;
  while (profile_events_.size() < parts + 1) {
    UCUDNN_ASSIGN_OR_RETURN(std::unique_ptr<Event> event, backend_.create_event());
    profile_events_.push_back(std::move(event));
  }
  auto record = [&](size_t boundary) { return backend_.record(*profile_events_[boundary], kMainStream); };

  UCUDNN_RETURN_IF_ERROR(record(0));
  UCUDNN_RETURN_IF_ERROR(copy_in());
  UCUDNN_RETURN_IF_ERROR(record(1));
  for (size_t s = 0; s < steps_.size(); ++s) {
    UCUDNN_RETURN_IF_ERROR(run_step(steps_[s], kMainStream));  // side steps too: each step timed alone
    UCUDNN_RETURN_IF_ERROR(record(s + 2));
  }
  UCUDNN_RETURN_IF_ERROR(copy_out());
  UCUDNN_RETURN_IF_ERROR(record(parts));
  UCUDNN_RETURN_IF_ERROR(backend_.synchronize("profiling model '" + graph_.name + "'"));

  std::vector<StepTiming> timings;
  timings.reserve(parts);
  for (size_t part = 0; part < parts; ++part) {
    StepTiming t;
    if (part == 0) {
      t = {-1, kCopyInputsName, OpKind::kCount, inputs, 0.0};
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
