// Making a plan's activation memory: every value the steps use (and with Plan::workspace_in_arena
// every step's workspace) gets an offset in the one arena, by liveness (runtime/plan/liveness.h)
// and greedy by size (arena_planner.h), so that buffers alive together never share a byte. The
// executor checks the result again (check_activation_memory, runtime/plan/plan_checks.h).
#pragma once

#include "runtime/ir/graph.h"
#include "runtime/plan/plan.h"

namespace ucudnn::optimizer {

// Lays out the activation arena of `graph` by liveness (graph inputs and all node
// outputs; constants stay out, and with plan->io_bound the graph's inputs and outputs), filling
// value_offsets, arena_bytes and unplanned_bytes; with plan->workspace_in_arena also each step's
// workspace_offset (and workspace_pool_bytes = 0).
// Values a side-stream step touches live over its whole window (Note [side stream]);
// plan->steps must be set, one per node in order.
void plan_activation_memory(const ir::Graph& graph, runtime::Plan* plan);

}  // namespace ucudnn::optimizer
