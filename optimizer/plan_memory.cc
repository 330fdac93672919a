// Making a plan's activation memory: offsets by liveness (see plan_memory.h). The Notes it follows
// live with their rules: [views] in runtime/plan/views.cc, [in-place pointwise] in
// runtime/plan/liveness.cc, [workspace in the arena] in runtime/plan/plan.h.
#include "optimizer/plan_memory.h"

#include <algorithm>
#include <vector>

#include "optimizer/arena_planner.h"
#include "runtime/core/bytes.h"
#include "runtime/plan/liveness.h"
#include "runtime/plan/side_stream.h"
#include "runtime/plan/views.h"

namespace ucudnn::optimizer {

using runtime::Lifetime;
using runtime::may_write_over;
using runtime::Plan;
using runtime::PlanStep;
using runtime::side_stream_values;
using runtime::value_bytes;
using runtime::value_lifetimes;
using runtime::view_roots;
using runtime::workspace_lifetime;

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
  std::vector<BufferRequest> requests;
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
  const ArenaLayout layout =
      plan->workspace_in_arena ? plan_arena(requests, kBufferAlignment) : plan_arena(requests);
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

}  // namespace ucudnn::optimizer
