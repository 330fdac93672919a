// Which convolutions may run on a second ("side") stream, and what that asks of
// the plan's memory.
//
// Note [side stream]
// ~~~~~~~~~~~~~~~~~~
// Steps run in graph order on the main stream. A step on the side stream
// (PlanStep::stream == 1) keeps its place in that order but may start as soon
// as the last main step producing one of its inputs (its *fork*) is done, and
// must be done before the first step reading one of its outputs (its *join*):
// the executor records an event after the fork on the main stream, makes the
// side stream wait for it, and makes the main stream wait for the side step's
// event before the join. So a side step may run at the same time as any main
// step strictly between fork and join (its *window*), and no longer.
//
// What that asks of the plan:
//  - memory: every activation the side step reads or writes is alive over the
//    whole window (plan_activation_memory extends those lifetimes), so no main
//    step in the window is given the same bytes;
//  - workspace: the side step's slice is disjoint from the slice of every step
//    in its window (assign_side_streams places it, or leaves the step on the
//    main stream when the pool limit does not allow that);
//  - order: a side step's inputs come from main steps (or are graph inputs and
//    constants) and its outputs are read only by main steps, so side steps
//    need no events between each other: they queue in graph order on the one
//    side stream.
//
// The canonical case is a ResNet downsample: after fuse_conv_add the block is
// conv1, conv2, downsample, conv3(+z), and the downsample reads only the
// block's input, so it may run beside conv1 and conv2.
// The CPU executor ignores streams: it runs every step in order, which a plan
// with side steps allows too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "runtime/executor/plan.h"
#include "runtime/ir/graph.h"

namespace ucudnn::runtime {

inline constexpr int kMainStream = 0;
inline constexpr int kSideStream = 1;

// The steps a side step may overlap: (fork, join), both exclusive. fork = -1
// when every input is a graph input or constant; join = number of steps when no
// step reads its outputs (graph outputs: the run's end waits for it).
struct SideWindow {
  int32_t fork = -1;
  int32_t join = 0;
};

// Steps are graph nodes in order (plan.steps[i].node == i).
SideWindow side_window(const ir::Graph& graph, ir::NodeId node);

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
                        Plan* plan);

// A plan's side steps against the rules of the Note: stream 0 or 1, side steps
// only on Conv nodes, neither reading from nor read by another side step.
Status check_side_streams(const ir::Graph& graph, const Plan& plan);

}  // namespace ucudnn::runtime
