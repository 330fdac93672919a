// Liveness of a plan's activation arena: the steps during which each value, and each step's
// workspace, must keep its bytes (side-stream windows and views included), and which step may write
// its output over an input (Note [in-place pointwise], Note [residual in place], liveness.cc). The
// optimizer lays the arena out from them (optimizer/plan_memory.h); check_activation_memory
// (plan_checks.h) checks a plan's arena against them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "runtime/ir/graph.h"
#include "runtime/plan/plan.h"

namespace ucudnn::runtime {

// A value's bytes; SIZE_MAX for a shape whose size does not fit (check_value_sizes refuses it).
size_t value_bytes(const ir::Value& v);

// Steps [first, last] during which a value must keep its bytes; first = -1 for a
// value that never lives in the arena (a constant, or one no step touches).
struct Lifetime {
  int32_t first = -1;
  int32_t last = -1;
};
// Per graph value, as plan_activation_memory (optimizer/plan_memory.h) lays them out (side-stream
// windows included).
std::vector<Lifetime> value_lifetimes(const ir::Graph& graph, const Plan& plan);

// The steps during which step `step`'s workspace is in use: the step itself, or a side-stream step's
// whole window (it may run beside any main step in it: Note [side stream]).
Lifetime workspace_lifetime(const ir::Graph& graph, const Plan& plan, int32_t step);

// Whether step `step` may write its output `output` over its input `input` (or over the buffer of a
// view of it the step reads: `root`, Note [views]); Note [in-place pointwise], Note [residual in place].
// `life`, `side` and `root` are the plan's value_lifetimes, side_stream_values and view_roots.
bool may_write_over(const ir::Graph& graph, const Plan& plan, const std::vector<Lifetime>& life,
                    const std::vector<bool>& side, const std::vector<ir::ValueId>& root, int32_t step,
                    ir::ValueId input, ir::ValueId output);

}  // namespace ucudnn::runtime
