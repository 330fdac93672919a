// Making a plan's side streams (Note [side stream], runtime/plan/side_stream.h): which convolutions
// are worth a second stream, and placing their workspace slices apart from those of the steps they
// may run beside. The planner calls both; check_side_streams (runtime/plan) checks the result.
#pragma once

#include <cstddef>
#include <vector>

#include "runtime/ir/graph.h"
#include "runtime/plan/plan.h"

namespace ucudnn::optimizer {

// Conv nodes worth putting on the side stream: the rules of the Note hold, and
// another Conv left on the main stream lies in the window. Only forward Convs:
// a training graph's backward convolutions (ConvGradData, ConvGradFilter) stay
// on the main stream, though their slices count among those a side step overlaps. Chosen greedily,
// widest window first (a downsample's window holds its block's conv1 and conv2;
// conv2's holds only the downsample).
std::vector<ir::NodeId> side_stream_candidates(const ir::Graph& graph);

// Puts each candidate on the side stream whose workspace slice can be disjoint
// from the slices of all steps in its window: kept where it is when it already
// is, else moved to just above the highest of them, if that ends within
// `pool_limit` bytes; otherwise the candidate stays on the main stream. Grows
// plan->workspace_pool_bytes as needed. Returns how many steps it put there.
int assign_side_streams(const ir::Graph& graph, const std::vector<ir::NodeId>& candidates, size_t pool_limit,
                        runtime::Plan* plan);

}  // namespace ucudnn::optimizer
