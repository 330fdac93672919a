// CpuExecutor: plan checks, one-time allocation, and the run loop.
#include "runtime/executor/cpu_executor.h"
#include "runtime/ir/fusion.h"

#include <chrono>
#include <cstring>

#include "runtime/cpu/cpu_kernel.h"
#include "runtime/executor/side_stream.h"
#include "runtime/ir/layout.h"

namespace ucudnn::runtime {

namespace {

std::vector<Shape> input_shapes(const ir::Graph& graph, const ir::Node& node, int64_t micro_batch) {
  std::vector<Shape> shapes;
  for (ir::ValueId id : node.inputs) shapes.push_back(id == ir::kNoValue ? Shape{} : graph.value(id).shape);
  if (micro_batch > 0)
    for (size_t i = 0; i < shapes.size(); ++i)
      if (ir::is_batch_divided_input(node, i) && !shapes[i].empty()) shapes[i][0] = micro_batch;
  return shapes;
}

// A view of rows [begin, begin + count) along dim 0 of `t`.
Tensor batch_slice(const Tensor& t, int64_t begin, int64_t count) {
  Shape shape = t.shape();
  const size_t row_bytes = t.nbytes() / static_cast<size_t>(shape[0]);
  shape[0] = count;
  auto* base = static_cast<std::byte*>(const_cast<void*>(t.raw()));
  return Tensor::view(t.dtype(), shape, base + row_bytes * static_cast<size_t>(begin));
}

}  // namespace

size_t cpu_step_workspace(const ir::Graph& graph, const ir::Node& node, int64_t micro_batch, int algorithm) {
  const cpu::CpuKernel& kernel = cpu::cpu_kernel(node.op);
  if (kernel.workspace_bytes == nullptr) return 0;
  return kernel.workspace_bytes(node, input_shapes(graph, node, micro_batch), algorithm);
}

Expected<Plan> make_cpu_plan(const ir::Graph& graph) {
  Plan plan;
  plan.device = "cpu";
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    PlanStep step;
    step.node = static_cast<ir::NodeId>(n);
    step.workspace_bytes = cpu_step_workspace(graph, graph.nodes[n], 0, -1);
    plan.workspace_pool_bytes = std::max(plan.workspace_pool_bytes, step.workspace_bytes);
    plan.steps.push_back(step);
  }
  plan_activation_memory(graph, &plan);
  return plan;
}

size_t CpuExecutor::weight_bytes() const {
  size_t bytes = 0;
  for (const ir::Value& v : graph_.values)
    if (v.constant) bytes += v.constant->nbytes();
  return bytes;
}

Expected<std::unique_ptr<CpuExecutor>> CpuExecutor::create(const ir::Graph& graph, Plan plan) {
  std::unique_ptr<CpuExecutor> executor(new CpuExecutor(graph, std::move(plan)));
  UCUDNN_RETURN_IF_ERROR(executor->build());
  return executor;
}

Status CpuExecutor::build() {
  for (const ir::Node& node : graph_.nodes)
    if (ir::is_channels_last(node)) return cpu::channels_last_unsupported(node);
  if (plan_.value_offsets.size() != graph_.values.size() || plan_.steps.size() != graph_.nodes.size())
    return invalid_argument("the plan does not match the model (" + std::to_string(plan_.steps.size()) +
                            " steps for " + std::to_string(graph_.nodes.size()) + " nodes)");
  // Side-stream steps run in order here like the others (Note [side stream]); the plan must still be consistent.
  UCUDNN_RETURN_IF_ERROR(check_side_streams(graph_, plan_));
  UCUDNN_ASSIGN_OR_RETURN(arena_, Tensor::allocate(DType::kUInt8, {static_cast<int64_t>(plan_.arena_bytes)}));
  UCUDNN_ASSIGN_OR_RETURN(workspace_,
                          Tensor::allocate(DType::kUInt8, {static_cast<int64_t>(plan_.workspace_pool_bytes)}));

  views_.resize(graph_.values.size());
  for (size_t id = 0; id < graph_.values.size(); ++id) {
    const ir::Value& v = graph_.values[id];
    if (v.constant) {
      views_[id] = *v.constant;
    } else if (plan_.value_offsets[id] >= 0) {
      const size_t offset = static_cast<size_t>(plan_.value_offsets[id]);
      if (offset + shape_numel(v.shape) * dtype_size(v.dtype) > plan_.arena_bytes)
        return invalid_argument("the plan places value '" + v.name + "' outside the arena");
      views_[id] = Tensor::view(v.dtype, v.shape, arena_.data<std::byte>() + offset);
    }
  }

  auto* pool = workspace_.data<std::byte>();
  for (const PlanStep& plan_step : plan_.steps) {
    if (plan_step.node < 0 || static_cast<size_t>(plan_step.node) >= graph_.nodes.size())
      return invalid_argument("the plan refers to node " + std::to_string(plan_step.node) + ", not in the model");
    const ir::Node& node = graph_.nodes[plan_step.node];
    if (cpu::cpu_kernel(node.op).run == nullptr)
      return unsupported(node.describe() + ": no CPU kernel");
    if (plan_step.workspace_offset + plan_step.workspace_bytes > plan_.workspace_pool_bytes)
      return invalid_argument(node.describe() + ": the plan's workspace slice lies outside the pool");

    Step step;
    step.node = &node;
    Call whole;
    for (ir::ValueId id : node.inputs) whole.src.push_back(id == ir::kNoValue ? nullptr : &views_[id]);
    for (ir::ValueId id : node.outputs) whole.dst.push_back(&views_[id]);
    whole.workspace = pool + plan_step.workspace_offset;
    whole.workspace_bytes = plan_step.workspace_bytes;

    if (plan_step.micro_batches.empty()) {
      step.calls.push_back(whole);
    } else {
      // Divided convolution: X (and z), Y are cut along the batch; weights are shared.
      if (node.op != OpKind::kConv)
        return invalid_argument(node.describe() + ": only convolutions can be divided into micro-batches");
      const int64_t batch = graph_.value(node.inputs[0]).shape[0];
      if (!micro_batches_cover(plan_step.micro_batches, batch))
        return invalid_argument(node.describe() + ": the plan's micro-batch sizes do not sum to the batch " +
                                std::to_string(batch));
      int64_t begin = 0;
      for (const MicroBatch& m : plan_step.micro_batches) {
        const size_t needed = cpu_step_workspace(graph_, node, m.size, m.algorithm);
        if (needed > plan_step.workspace_bytes)
          return invalid_argument(node.describe() + ": micro-batch of " + std::to_string(m.size) +
                                  " with algorithm " + std::to_string(m.algorithm) + " needs " +
                                  std::to_string(needed) + " workspace bytes, the plan gives " +
                                  std::to_string(plan_step.workspace_bytes));
        Call call = whole;
        call.algorithm = m.algorithm;
        for (size_t i = 0; i < whole.src.size(); ++i) {
          if (!ir::is_batch_divided_input(node, i) || whole.src[i] == nullptr) continue;
          slice_views_.push_back(std::make_unique<Tensor>(batch_slice(*whole.src[i], begin, m.size)));
          call.src[i] = slice_views_.back().get();
        }
        slice_views_.push_back(std::make_unique<Tensor>(batch_slice(*whole.dst[0], begin, m.size)));
        call.dst[0] = slice_views_.back().get();
        step.calls.push_back(std::move(call));
        begin += m.size;
      }
    }
    steps_.push_back(std::move(step));
  }
  return Status::ok();
}

Status CpuExecutor::copy_inputs_in(const std::vector<Tensor>& inputs) {
  UCUDNN_RETURN_IF_ERROR(check_run_inputs(graph_, inputs));
  for (size_t i = 0; i < inputs.size(); ++i) {
    Tensor& dst = views_[graph_.inputs[i]];
    if (dst.nbytes() > 0) std::memcpy(dst.raw(), inputs[i].raw(), dst.nbytes());
  }
  return Status::ok();
}

Status CpuExecutor::run_step(const Step& step) {
  const cpu::CpuKernel& kernel = cpu::cpu_kernel(step.node->op);
  for (const Call& call : step.calls) {
    cpu::KernelArgs args{*step.node, call.src, call.dst, call.workspace, call.workspace_bytes, call.algorithm};
    Status status = kernel.run(args);
    if (!status.is_ok()) return status.with_context(step.node->describe());
  }
  return Status::ok();
}

Expected<std::vector<Tensor>> CpuExecutor::copy_outputs_out() {
  std::vector<Tensor> outputs;
  for (ir::ValueId id : graph_.outputs) {
    UCUDNN_ASSIGN_OR_RETURN(Tensor out, views_[id].clone());
    outputs.push_back(std::move(out));
  }
  return outputs;
}

Expected<std::vector<Tensor>> CpuExecutor::run(const std::vector<Tensor>& inputs) {
  UCUDNN_RETURN_IF_ERROR(copy_inputs_in(inputs));
  for (const Step& step : steps_) UCUDNN_RETURN_IF_ERROR(run_step(step));
  return copy_outputs_out();
}

Expected<std::vector<StepTiming>> CpuExecutor::profile(const std::vector<Tensor>& inputs) {
  using Clock = std::chrono::steady_clock;
  auto elapsed_ms = [](Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  };
  std::vector<StepTiming> timings;
  timings.reserve(steps_.size() + 2);

  Clock::time_point start = Clock::now();
  UCUDNN_RETURN_IF_ERROR(copy_inputs_in(inputs));
  timings.push_back({-1, kCopyInputsName, OpKind::kCount, static_cast<int>(inputs.size()), elapsed_ms(start)});

  for (size_t s = 0; s < steps_.size(); ++s) {
    const Step& step = steps_[s];
    start = Clock::now();
    UCUDNN_RETURN_IF_ERROR(run_step(step));
    timings.push_back({plan_.steps[s].node, step.node->name, step.node->op, static_cast<int>(step.calls.size()),
                       elapsed_ms(start)});
  }

  start = Clock::now();
  UCUDNN_RETURN_IF_ERROR(copy_outputs_out().status());
  timings.push_back(
      {-1, kCopyOutputsName, OpKind::kCount, static_cast<int>(graph_.outputs.size()), elapsed_ms(start)});
  return timings;
}

}  // namespace ucudnn::runtime
