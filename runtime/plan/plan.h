// runtime::Plan: everything the executor needs to run a graph, as plain data.
//
// Per step (one graph node, in order): the micro-batches a convolution runs as
// (size + algorithm; empty = the whole batch with the backend's default
// algorithm) and the step's workspace slice in the one workspace pool. Per
// value: its offset in the activation arena (-1 for constants). The optimizer
// writes Plans, the report renders them, the executor runs them, tests compare
// them. The executor never benchmarks and never allocates while running.
//
// The plan layer (runtime/plan) around it: its JSON (plan_json.h), liveness (liveness.h), views
// (views.h), side-stream windows (side_stream.h) and the checks of an untrusted plan
// (plan_checks.h). Making a plan is the optimizer's (optimizer/plan_memory.h, optimizer/side_streams.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/ir/graph.h"

namespace ucudnn::runtime {

struct MicroBatch {
  int64_t size = 0;
  int algorithm = -1;  // backend-specific algorithm id; -1 = backend default
  friend bool operator==(const MicroBatch&, const MicroBatch&) = default;
};

struct PlanStep {
  ir::NodeId node = -1;
  std::vector<MicroBatch> micro_batches;  // empty: one call on the whole batch, default algorithm
  size_t workspace_offset = 0;            // the step's workspace: offset in the pool (or, with
  size_t workspace_bytes = 0;             //   Plan::workspace_in_arena, in the activation arena)
  int stream = 0;                         // 0: main; 1: side (Note [side stream], side_stream.h)
};

struct Plan {
  std::string device;                   // "cpu" or "cuda"
  std::string device_name;              // the processor it was planned for (GPU or CPU model)
  std::string model_fingerprint;        // graph_fingerprint() of the graph it was planned for
  std::string policy = "undivided";     // how the convolution configurations were chosen
  std::string layout = "nchw";          // activation layout of the graph it runs ("nchw", "nhwc")
  // "nhwc": the Conv nodes (by name) that run NCHW in it — regions of the other layout (Note
  // [layout regions], optimizer/layout_regions.h); convert_to_channels_last_except rebuilds the graph from them.
  std::vector<std::string> nchw_convs;
  double predicted_conv_ms = 0;         // Σ convolution time the planner predicted (0: not predicted)
  std::vector<PlanStep> steps;
  std::vector<int64_t> value_offsets;   // arena offset per graph value; -1 = not in the arena
  size_t arena_bytes = 0;
  size_t unplanned_bytes = 0;           // Σ activation bytes without liveness planning
  size_t workspace_pool_bytes = 0;
  // Note [workspace in the arena]: each step's workspace is a buffer of the activation arena, alive
  // while the step runs (a side-stream step: over its window), placed by liveness beside the values;
  // there is no pool (workspace_pool_bytes 0). Sessions plan so; the paper's separate pool otherwise.
  bool workspace_in_arena = false;
  // Note [views]: the output of a Reshape, Flatten, Squeeze, Unsqueeze or Identity is its input's
  // bytes (one buffer; the step copies nothing). Sessions plan so.
  bool zero_copy_views = false;
  // Note [residual in place]: a Conv whose residual input z is read by no later step writes Y over z's
  // bytes, and the backend adds z where it lies (the CPU's: runtime/cpu/conv_algorithms.h). CPU sessions
  // plan so; not the GPU, whose fallback path writes Y before it adds z.
  bool residual_in_place = false;
  // Graph inputs and outputs live in the caller's buffers, not in the arena: the plan runs only
  // through Executor::run_bound (the Trainer's parameters, gradients and batches).
  bool io_bound = false;
};

// The largest workspace one step of `plan` uses.
size_t largest_step_workspace(const Plan& plan);

// A short hash of the graph's structure and shapes (ops, attributes' names,
// value shapes and dtypes): a plan made for one graph is refused by another.
std::string graph_fingerprint(const ir::Graph& graph);

// Whether `micro_batches` cover the node's batch: sizes positive and summing to `batch`.
bool micro_batches_cover(const std::vector<MicroBatch>& micro_batches, int64_t batch);

}  // namespace ucudnn::runtime
