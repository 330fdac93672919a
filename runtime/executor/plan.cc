// Plan helpers: micro-batch checks and activation memory layout by liveness.
#include "runtime/executor/plan.h"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <variant>

#include "runtime/core/bytes.h"
#include "runtime/executor/side_stream.h"
#include "runtime/ir/fusion.h"
#include "runtime/ir/pointwise_program.h"
#include "runtime/memory/arena_planner.h"

namespace ucudnn::runtime {

namespace {

// A value's bytes; SIZE_MAX for a shape whose size does not fit (check_value_sizes refuses it).
size_t value_bytes(const ir::Value& v) {
  auto bytes = checked_nbytes(v.dtype, v.shape, v.name);
  return bytes ? *bytes : SIZE_MAX;
}

// Per value, whether a side-stream step reads or writes it (Note [side stream]).
std::vector<bool> side_stream_values(const ir::Graph& graph, const Plan& plan) {
  std::vector<bool> touched(graph.values.size(), false);
  for (size_t step = 0; step < plan.steps.size() && step < graph.nodes.size(); ++step) {
    if (plan.steps[step].stream != kSideStream) continue;
    const ir::Node& node = graph.nodes[step];
    for (const std::vector<ir::ValueId>* ids : {&node.inputs, &node.outputs})
      for (ir::ValueId id : *ids)
        if (id != ir::kNoValue) touched[id] = true;
  }
  return touched;
}

// Note [views]: a Reshape, Flatten, Squeeze, Unsqueeze or Identity writes its input's bytes unchanged,
// so with Plan::zero_copy_views its output is placed on its input (the executor then runs no copy:
// the two pointers are equal). A view and the value it views are one buffer: every member lives
// until the last of them is read (value_lifetimes), so a FusedPointwise writes over such a buffer
// only when no member is read later. Not for constants, values a side-stream step touches, nor the
// graph's inputs and outputs (a bound run, Executor::run_bound, puts those in the caller's buffers).
//
// Per value, the value whose bytes it is (itself when it is no view); chains resolve to the first.
std::vector<ir::ValueId> view_roots(const ir::Graph& graph, const Plan& plan) {
  std::vector<ir::ValueId> root(graph.values.size());
  std::iota(root.begin(), root.end(), 0);
  if (!plan.zero_copy_views) return root;
  const std::vector<bool> side = side_stream_values(graph, plan);
  auto callers = [&](ir::ValueId id) {
    return std::find(graph.inputs.begin(), graph.inputs.end(), id) != graph.inputs.end() ||
           std::find(graph.outputs.begin(), graph.outputs.end(), id) != graph.outputs.end();
  };
  for (const ir::Node& node : graph.nodes) {
    if (!is_view_node(node) || node.inputs.empty() || node.outputs.size() != 1) continue;
    const ir::ValueId in = node.inputs[0], out = node.outputs[0];
    if (in == ir::kNoValue || out == ir::kNoValue) continue;
    const ir::Value& a = graph.value(in);
    const ir::Value& b = graph.value(out);
    if (a.constant || b.constant || side[in] || side[out] || callers(in) || callers(out) || a.dtype != b.dtype ||
        value_bytes(a) != value_bytes(b) || value_bytes(a) == SIZE_MAX)
      continue;
    root[out] = root[in];
  }
  return root;
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

// The steps during which step `step`'s workspace is in use: the step itself, or a side-stream step's
// whole window (it may run beside any main step in it: Note [side stream]).
Lifetime workspace_lifetime(const ir::Graph& graph, const Plan& plan, int32_t step) {
  if (plan.steps[step].stream != kSideStream) return {step, step};
  const SideWindow window = side_window(graph, step);
  return {window.fork + 1, window.join};
}

}  // namespace

bool is_view_node(const ir::Node& node) {
  switch (node.op) {
    case OpKind::kReshape: case OpKind::kFlatten: case OpKind::kSqueeze: case OpKind::kUnsqueeze:
    case OpKind::kIdentity:
      return true;
    default:
      return false;
  }
}

size_t largest_step_workspace(const Plan& plan) {
  size_t largest = 0;
  for (const PlanStep& step : plan.steps) largest = std::max(largest, step.workspace_bytes);
  return largest;
}

bool micro_batches_cover(const std::vector<MicroBatch>& micro_batches, int64_t batch) {
  int64_t sum = 0;
  for (const MicroBatch& m : micro_batches)
    if (m.size <= 0 || !checked_add(sum, m.size, &sum)) return false;  // a wrapped sum could equal the batch
  return sum == batch;
}

std::string graph_fingerprint(const ir::Graph& graph) {
  // FNV-1a over a canonical text of the graph.
  uint64_t hash = 1469598103934665603ull;
  auto mix = [&hash](const std::string& text) {
    for (unsigned char c : text) {
      hash ^= c;
      hash *= 1099511628211ull;
    }
    hash ^= 0xff;
    hash *= 1099511628211ull;
  };
  for (const ir::Node& node : graph.nodes) {
    mix(op_name(node.op));
    for (const auto& [name, value] : node.attrs.all()) mix(name);
    for (ir::ValueId id : node.inputs) mix(id == ir::kNoValue ? "-" : shape_to_string(graph.value(id).shape));
    for (ir::ValueId id : node.outputs) mix(shape_to_string(graph.value(id).shape) + dtype_name(graph.value(id).dtype));
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
  return text;
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

void plan_activation_memory(const ir::Graph& graph, Plan* plan) {
  const size_t n_values = graph.values.size();
  const std::vector<Lifetime> life = value_lifetimes(graph, *plan);
  const std::vector<bool> side = side_stream_values(graph, *plan);
  const std::vector<ir::ValueId> root = view_roots(graph, *plan);
  // One buffer per view group (Note [views]) and per chain of values that write over each other (Note
  // [in-place pointwise]), named by its first value; `last` is the buffer's last step.
  std::vector<ir::ValueId> buffer_of(n_values, ir::kNoValue);
  std::vector<int32_t> last(n_values, -1);
  for (size_t id = 0; id < n_values; ++id) {
    buffer_of[id] = static_cast<ir::ValueId>(id);
    last[id] = life[id].last;
  }
  // In step order, so a value's buffer is known before a later step joins it.
  auto join = [&](ir::ValueId value, ir::ValueId into) {
    buffer_of[value] = buffer_of[into];
    last[buffer_of[into]] = std::max(last[buffer_of[into]], life[value].last);
  };
  for (size_t step = 0; step < graph.nodes.size(); ++step) {
    const ir::Node& node = graph.nodes[step];
    if (node.outputs.size() != 1 || node.outputs[0] == ir::kNoValue) continue;
    const ir::ValueId output = node.outputs[0];
    if (root[output] != output) {  // a view: its input's buffer
      join(output, node.inputs[0]);
      continue;
    }
    for (ir::ValueId input : node.inputs) {
      if (input == ir::kNoValue ||
          !may_write_over(graph, *plan, life, side, root, static_cast<int32_t>(step), input, output))
        continue;
      join(output, input);
      break;
    }
  }
  std::vector<memory::BufferRequest> requests;
  std::vector<ir::ValueId> request_value;
  size_t unplanned = 0;
  for (size_t id = 0; id < n_values; ++id) {
    const ir::Value& v = graph.values[id];
    if (v.constant || life[id].first < 0) continue;
    if (!checked_add(unplanned, value_bytes(v), &unplanned)) unplanned = SIZE_MAX;
    if (buffer_of[id] != static_cast<ir::ValueId>(id)) continue;
    requests.push_back({value_bytes(v), life[id].first, last[id]});
    request_value.push_back(static_cast<ir::ValueId>(id));
  }
  // Note [workspace in the arena]: the workspaces are buffers too, each alive while its step runs. A
  // convolution's workspace then takes bytes the activations of that step leave free, instead of a
  // pool beside the arena that holds the largest one all the time.
  const size_t value_requests = requests.size();
  if (plan->workspace_in_arena) {
    for (int32_t step = 0; step < static_cast<int32_t>(plan->steps.size()); ++step) {
      if (plan->steps[step].workspace_bytes == 0) continue;
      const Lifetime w = workspace_lifetime(graph, *plan, step);
      requests.push_back({plan->steps[step].workspace_bytes, w.first, w.last});
      request_value.push_back(step);
    }
  }
  // A workspace starts at kBufferAlignment, as the pool's slices do; values need less.
  const memory::ArenaLayout layout =
      plan->workspace_in_arena ? memory::plan_arena(requests, kBufferAlignment) : memory::plan_arena(requests);
  std::vector<int64_t> buffer_offset(n_values, -1);
  for (size_t i = 0; i < value_requests; ++i)
    buffer_offset[request_value[i]] = static_cast<int64_t>(layout.offsets[i]);
  if (plan->workspace_in_arena) {
    for (PlanStep& step : plan->steps) step.workspace_offset = 0;  // a step without one: 0
    plan->workspace_pool_bytes = 0;
  }
  for (size_t i = value_requests; i < requests.size(); ++i)
    plan->steps[request_value[i]].workspace_offset = layout.offsets[i];
  plan->value_offsets.assign(n_values, -1);
  for (size_t id = 0; id < n_values; ++id)
    if (!graph.values[id].constant && life[id].first >= 0) plan->value_offsets[id] = buffer_offset[buffer_of[id]];
  plan->arena_bytes = layout.arena_bytes;
  plan->unplanned_bytes = unplanned;
}

Status check_activation_memory(const ir::Graph& graph, const Plan& plan) {
  struct Placed {
    ir::ValueId id;  // kNoValue: the workspace of step `step`
    size_t begin, end;
    Lifetime life;
    int32_t step = -1;
  };
  auto name = [&](const Placed& p) {
    return p.id != ir::kNoValue ? "value '" + graph.value(p.id).name + "'"
                                : "the workspace of step " + std::to_string(p.step) + " (" +
                                      graph.nodes[p.step].describe() + ")";
  };
  const std::vector<Lifetime> life = value_lifetimes(graph, plan);
  std::vector<Placed> placed;
  for (size_t id = 0; id < graph.values.size(); ++id) {
    const ir::Value& v = graph.values[id];
    const int64_t offset = plan.value_offsets[id];
    if (v.constant) continue;
    if (offset == -1) {
      if (life[id].first >= 0)
        return invalid_argument("the plan gives value '" + v.name + "', which the model uses, no place in the arena");
      continue;
    }
    size_t end = 0;
    if (offset < 0 || !checked_add(static_cast<size_t>(offset), value_bytes(v), &end) || end > plan.arena_bytes)
      return invalid_argument("the plan places value '" + v.name + "' at arena offset " + std::to_string(offset) +
                              ", outside the arena of " + std::to_string(plan.arena_bytes) + " bytes");
    // A misaligned element faults on the GPU (and is undefined behaviour in C++).
    if (dtype_size(v.dtype) > 1 && static_cast<size_t>(offset) % dtype_size(v.dtype) != 0)
      return invalid_argument("the plan places value '" + v.name + "' at arena offset " + std::to_string(offset) +
                              ", not a multiple of its element size " + std::to_string(dtype_size(v.dtype)));
    if (end > static_cast<size_t>(offset) && life[id].first >= 0)
      placed.push_back({static_cast<ir::ValueId>(id), static_cast<size_t>(offset), end, life[id]});
  }
  if (plan.workspace_in_arena) {  // Note [workspace in the arena]
    for (int32_t step = 0; step < static_cast<int32_t>(plan.steps.size()) &&
                           static_cast<size_t>(step) < graph.nodes.size(); ++step) {
      const PlanStep& s = plan.steps[step];
      if (s.workspace_bytes == 0 && s.workspace_offset > plan.arena_bytes)
        return invalid_argument("the plan places the empty workspace of step " + std::to_string(step) + " (" +
                                graph.nodes[step].describe() + ") at arena offset " +
                                std::to_string(s.workspace_offset) + ", outside the arena of " +
                                std::to_string(plan.arena_bytes) + " bytes");
      if (s.workspace_bytes == 0) continue;
      size_t end = 0;
      if (!checked_add(s.workspace_offset, s.workspace_bytes, &end) || end > plan.arena_bytes)
        return invalid_argument("the plan places the workspace of step " + std::to_string(step) + " (" +
                                graph.nodes[step].describe() + ", " + std::to_string(s.workspace_bytes) +
                                " bytes at arena offset " + std::to_string(s.workspace_offset) +
                                ") outside the arena of " + std::to_string(plan.arena_bytes) + " bytes");
      if (s.workspace_offset % kBufferAlignment != 0)
        return invalid_argument("the plan places the workspace of step " + std::to_string(step) + " (" +
                                graph.nodes[step].describe() + ") at arena offset " +
                                std::to_string(s.workspace_offset) + ", not a multiple of " +
                                std::to_string(kBufferAlignment));
      placed.push_back({ir::kNoValue, s.workspace_offset, end, workspace_lifetime(graph, plan, step), step});
    }
  }
  std::sort(placed.begin(), placed.end(), [](const Placed& a, const Placed& b) { return a.begin < b.begin; });
  // Whether one of the two is the output of the step that last reads the other, written over it.
  const std::vector<bool> side = side_stream_values(graph, plan);
  const std::vector<ir::ValueId> root = view_roots(graph, plan);
  auto writes_over = [&](const Placed& a, const Placed& b) {
    if (a.id == ir::kNoValue || b.id == ir::kNoValue) return false;
    if (root[a.id] == root[b.id]) return true;  // a view and what it views (Note [views])
    return may_write_over(graph, plan, life, side, root, b.life.first, a.id, b.id) ||
           may_write_over(graph, plan, life, side, root, a.life.first, b.id, a.id);
  };
  for (size_t i = 0; i < placed.size(); ++i)
    for (size_t j = i + 1; j < placed.size() && placed[j].begin < placed[i].end; ++j) {
      const Placed& a = placed[i];
      const Placed& b = placed[j];
      if (a.life.last < b.life.first || b.life.last < a.life.first) continue;  // never alive together
      if (a.begin == b.begin && a.end == b.end && writes_over(a, b)) continue;  // Note [in-place pointwise]
      return invalid_argument("the plan gives " + name(a) + " and " + name(b) +
                              " overlapping arena bytes while both are alive (steps " +
                              std::to_string(std::max(a.life.first, b.life.first)) + " to " +
                              std::to_string(std::min(a.life.last, b.life.last)) + ")");
    }
  return Status::ok();
}

}  // namespace ucudnn::runtime
