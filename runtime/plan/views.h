// Views (Note [views], views.cc): the nodes that only reshape, and with Plan::zero_copy_views the
// values that are their input's bytes.
#pragma once

#include <vector>

#include "runtime/ir/graph.h"
#include "runtime/plan/plan.h"

namespace ucudnn::runtime {

// Whether `node` only reshapes: Reshape, Flatten, Squeeze, Unsqueeze or Identity (Note [views]).
bool is_view_node(const ir::Node& node);

// Per value, the value whose bytes it is under `plan` (itself when it is no view); chains resolve to
// the first (Note [views]).
std::vector<ir::ValueId> view_roots(const ir::Graph& graph, const Plan& plan);

}  // namespace ucudnn::runtime
