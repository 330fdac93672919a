// Side-stream windows: when a step on a second ("side") stream may run, what that asks of the
// plan's memory, and the check of a plan's side steps. Choosing those steps is the optimizer's
// (optimizer/side_streams.h).
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
//    whole window (value_lifetimes, liveness.h, extends those lifetimes), so
//    no main step in the window is given the same bytes;
//  - workspace: the side step's slice is disjoint from the slice of every step
//    in its window (assign_side_streams, optimizer/side_streams.h, places it,
//    or leaves the step on the main stream when the pool limit does not allow that);
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

#include "runtime/ir/graph.h"
#include "runtime/plan/plan.h"

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

// Per graph value, whether a side-stream step of `plan` reads or writes it (Note [side stream]).
std::vector<bool> side_stream_values(const ir::Graph& graph, const Plan& plan);

// Whether the workspace slices of steps `a` and `b` share a byte (an empty slice shares none).
bool slices_overlap(const PlanStep& a, const PlanStep& b);

// The side-stream rules that involve the other side steps: no producer and no consumer of node `n`
// is marked in `side` (one flag per node).
bool neighbours_on_main(const ir::Graph& graph, ir::NodeId n, const std::vector<bool>& side);

// A plan's side steps against the rules of the Note: stream 0 or 1, side steps
// only on Conv nodes, neither reading from nor read by another side step.
Status check_side_streams(const ir::Graph& graph, const Plan& plan);

}  // namespace ucudnn::runtime
