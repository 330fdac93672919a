// Liveness of the activation arena: lifetimes and in-place writes (see liveness.h).
#include "runtime/plan/liveness.h"

#include <algorithm>
#include <variant>

#include "runtime/core/bytes.h"
#include "runtime/ir/fusion.h"
#include "runtime/ir/pointwise_program.h"
#include "runtime/plan/side_stream.h"
#include "runtime/plan/views.h"

namespace ucudnn::runtime {

// A value's bytes; SIZE_MAX for a shape whose size does not fit (check_value_sizes refuses it).
size_t value_bytes(const ir::Value& v) {
  auto bytes = checked_nbytes(v.dtype, v.shape, v.name);
  return bytes ? *bytes : SIZE_MAX;
}

std::vector<Lifetime> value_lifetimes(const ir::Graph& graph, const Plan& plan) {
  const int32_t n_steps = static_cast<int32_t>(graph.nodes.size());
  std::vector<Lifetime> life(graph.values.size());
  for (ir::ValueId id : graph.inputs) life[id] = {0, 0};
  for (int32_t step = 0; step < n_steps; ++step) {
    const ir::Node& node = graph.nodes[step];
    for (ir::ValueId id : node.inputs)
      if (id != ir::kNoValue && !graph.value(id).constant) life[id].last = step;
    for (ir::ValueId id : node.outputs) {
      life[id].first = step;
      if (life[id].last < step) life[id].last = step;
    }
  }
  for (ir::ValueId id : graph.outputs)
    if (!graph.value(id).constant) life[id].last = n_steps;  // outputs live until they are copied out
  for (int32_t step = 0; step < n_steps && static_cast<size_t>(step) < plan.steps.size(); ++step) {
    if (plan.steps[step].stream != kSideStream) continue;
    const SideWindow window = side_window(graph, step);
    const ir::Node& node = graph.nodes[step];
    for (const std::vector<ir::ValueId>* ids : {&node.inputs, &node.outputs})
      for (ir::ValueId id : *ids) {
        if (id == ir::kNoValue || graph.value(id).constant) continue;
        life[id].first = std::min(life[id].first, window.fork + 1);
        life[id].last = std::max(life[id].last, window.join);
      }
  }
  for (size_t id = 0; id < life.size(); ++id)
    if (graph.values[id].constant) life[id] = {};
  if (plan.io_bound) {  // in the caller's buffers
    for (ir::ValueId id : graph.inputs) life[id] = {};
    for (ir::ValueId id : graph.outputs) life[id] = {};
  }
  // Note [views]: a view and the value it views are one buffer, alive until the last of them is read.
  const std::vector<ir::ValueId> root = view_roots(graph, plan);
  std::vector<int32_t> group_last(life.size(), -1);
  for (size_t id = 0; id < life.size(); ++id) group_last[root[id]] = std::max(group_last[root[id]], life[id].last);
  for (size_t id = 0; id < life.size(); ++id)
    if (life[id].first >= 0) life[id].last = group_last[root[id]];
  return life;
}

// The steps during which step `step`'s workspace is in use: the step itself, or a side-stream step's
// whole window (it may run beside any main step in it: Note [side stream]).
Lifetime workspace_lifetime(const ir::Graph& graph, const Plan& plan, int32_t step) {
  if (plan.steps[step].stream != kSideStream) return {step, step};
  const SideWindow window = side_window(graph, step);
  return {window.fork + 1, window.join};
}

// Note [in-place pointwise]: a FusedPointwise without a concat reads each leaf at the output's own
// index where the leaf has the output's shape, each output element once, before writing it — on the
// CPU in one block of one thread, on the GPU in one thread (runtime/cpu/fused_pointwise.cc,
// runtime/cuda/fused_pointwise_device.cuh). So when such an input is read by no later step, the
// output may take its bytes: EfficientNet's expanded Conv output and the SiLU of it then share one
// buffer instead of two alive together (at batch 128 two of 675 MiB). The input must not be a graph
// input nor touched by a side-stream step (which may run beside this one), and the output must be
// first written by this step. plan_activation_memory gives such pairs one buffer;
// check_activation_memory accepts exactly them as sharing bytes while alive together.
//
// Note [residual in place]: with Plan::residual_in_place a Conv may likewise write Y over its residual
// input z (Note [fused nodes]) under the same conditions, when z is none of X, W and B: ResNet's
// block output then takes the bytes of the shortcut it adds instead of a copy of them (the CPU's
// oneDNN sum post-op accumulates into Y, which had to hold z first: 352 MB copied per ResNet-50 run at
// batch 16). The backend must then add z where it lies: the CPU's convolutions do (conv_algorithms.h).
//
// Whether step `step` may write its output `output` over its input `input` (or over the buffer of a
// view of it the step reads: `root`, Note [views]).
bool may_write_over(const ir::Graph& graph, const Plan& plan, const std::vector<Lifetime>& life,
                    const std::vector<bool>& side, const std::vector<ir::ValueId>& root, int32_t step,
                    ir::ValueId input, ir::ValueId output) {
  if (step < 0 || static_cast<size_t>(step) >= graph.nodes.size() ||
      static_cast<size_t>(step) >= plan.steps.size() || plan.steps[step].stream == kSideStream)
    return false;
  const ir::Node& node = graph.nodes[step];
  if (node.outputs.size() != 1 || node.outputs[0] != output) return false;
  auto in_buffer = [&](ir::ValueId id) { return id != ir::kNoValue && root[id] == root[input]; };
  const auto reads = std::find_if(node.inputs.begin(), node.inputs.end(), in_buffer);
  if (reads == node.inputs.end()) return false;
  if (node.op == OpKind::kConv) {  // Note [residual in place]: z alone may be written over, X, W and B not
    const size_t z = ir::kConvResidualInput;
    if (!plan.residual_in_place || node.inputs.size() <= z || *reads != node.inputs[z] ||
        std::count_if(node.inputs.begin(), node.inputs.end(), in_buffer) != 1)
      return false;
  } else if (node.op == OpKind::kFusedPointwise) {
    const auto& attrs = node.attrs.all();
    const auto concat = attrs.find(ir::kPointwiseConcatCountAttr);
    if (concat != attrs.end()) {
      const int64_t* count = std::get_if<int64_t>(&concat->second);
      if (count == nullptr || *count != 0) return false;
    }
  } else {
    return false;
  }
  input = *reads;  // the value the step reads: the shape that must match the output's
  if (std::find(graph.inputs.begin(), graph.inputs.end(), root[input]) != graph.inputs.end()) return false;
  const ir::Value& in = graph.value(input);
  const ir::Value& out = graph.value(output);
  return !in.constant && !side[input] && !side[output] && life[input].first >= 0 && life[input].last == step &&
         life[output].first == step && in.dtype == out.dtype && in.shape == out.shape;
}

}  // namespace ucudnn::runtime
