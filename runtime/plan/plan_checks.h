// The checks of an untrusted plan: a plan read from a file or written by hand is data from outside,
// so before Executor::create touches memory it checks the whole plan against the graph — every
// value's size, every step's node, slice, micro-batches and algorithms, every value inside the
// arena, aligned and apart from the values alive with it, all with overflow-safe sums — and refuses
// it naming the values and steps. (check_side_streams, side_stream.h, and check_plan_matches,
// plan_json.h, are the other two.)
#pragma once

#include <string>

#include "runtime/core/status.h"
#include "runtime/ir/graph.h"
#include "runtime/plan/plan.h"

namespace ucudnn::runtime {

// The whole plan against `graph` and the device it is to run on (a backend's name): the values'
// sizes, the device, one step per node in order, the arena within reach of int64 offsets,
// check_activation_memory, each step's workspace slice and micro-batches, check_side_streams.
Status check_plan(const ir::Graph& graph, const Plan& plan, const std::string& device);

// A plan's arena against the graph: every value (and with workspace_in_arena every step's
// workspace) inside the arena (overflow-safe), and no two of them alive at the same time sharing
// a byte. Names the values and steps.
Status check_activation_memory(const ir::Graph& graph, const Plan& plan);

}  // namespace ucudnn::runtime
