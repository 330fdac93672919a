// The planner's pure part: a graph and its convolution kernels' timings in, a
// runtime::Plan out. Nothing here measures, reads a file or touches a device —
// plan_model.h gathers the timings (benchmarker, database) and calls this — so
// a test can hand it timings written by hand.
//
// Stages: the policy (undivided, wr or wd; optimizer/policies.h) over every
// kernel, forward and backward (conv_kernels.h) → per convolution step its
// micro-batches and workspace slice → every other step its own workspace
// (below) → with two streams, the side-stream steps and their slices
// (runtime/plan/side_stream.h, optimizer/side_streams.h) → activation memory by liveness (plan_memory.h).
//
// Workspace of the steps that are not convolutions: what the backend's own query
// answers from shapes (BackendCapabilities::step_workspace, PlannerOptions::backend:
// the CPU's e.g. a Gemm's packing buffer; the CUDA backend's BatchNormTrain's
// partial sums). That is not taken on trust: the executor prepares every kernel at
// load and refuses a plan whose slice is smaller than the kernel asks for,
// naming the step, so a kernel that starts needing some fails loudly at load.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "optimizer/conv_kernels.h"
#include "optimizer/policies.h"
#include "runtime/plan/plan.h"

namespace ucudnn::runtime {
class BackendCapabilities;  // runtime/backend/backend.h
}  // namespace ucudnn::runtime

namespace ucudnn::optimizer {

enum class Policy { kUndivided, kWr, kWd };
const char* policy_name(Policy policy);  // "undivided", "wr", "wd"

// A workspace bound meaning "none": every policy then lets each kernel take its
// fastest configuration (wd without solving the ILP), and the benchmarkers
// measure with the memory actually free.
inline constexpr size_t kUnlimitedWorkspace = SIZE_MAX;

// What the policy is asked for. Where the timings come from is plan_model's business.
struct PlannerOptions {
  Policy policy = Policy::kWr;
  // Bytes: each kernel's limit under undivided and wr; the total all kernels
  // share under wd. kUnlimitedWorkspace: no bound.
  size_t workspace_bytes = size_t{64} << 20;
  BatchSizePolicy batch_sizes = BatchSizePolicy::kPowerOfTwo;
  double division_threshold = kDefaultDivisionThreshold;
  bool share_workspace = false;  // wd: kernels that never overlap share bytes (policies.h)
  int streams = 1;               // 2: independent convolutions on a side stream (Note [side stream])
  bool io_bound = false;         // the graph's inputs and outputs stay out of the arena (runtime::Plan::io_bound)
  // Each step's workspace a buffer of the arena, not a slice of a pool (Note [workspace in the arena],
  // runtime/plan/plan.h): what sessions plan. The policies' budgets bound the workspaces alike.
  bool workspace_in_arena = false;
  // Views' outputs on their inputs' bytes (Note [views], runtime/plan/plan.h): what sessions plan.
  bool zero_copy_views = false;
  // A Conv's Y over its residual z where z dies there (Note [residual in place], runtime/plan/plan.h):
  // what CPU sessions plan.
  bool residual_in_place = false;
  // What the backend that runs the plan can do (its step workspace query; Note [backend capabilities],
  // runtime/backend/backend.h); nullptr: the device's (bench/device_benchmarker.h: device_capabilities).
  const runtime::BackendCapabilities* backend = nullptr;
};

// Every convolution kernel of a graph with its timings: the planner's input.
struct GraphTimings {
  std::string device_name;           // the processor they were measured on (becomes Plan::device_name)
  std::vector<ConvKernel> kernels;   // collect_conv_kernels(graph, ...) order
  std::vector<NamedKernel> timings;  // one per kernel, same order (name: node + shapes)
  int kernels_benchmarked = 0;       // measured while gathering
  int kernels_reused = 0;            // taken from the database
};

struct PlanResult {
  runtime::Plan plan;
  PlannerOptions options;           // what was asked for
  std::vector<ConvKernel> kernels;  // same order as policy.kernels and timings
  std::vector<NamedKernel> timings; // each kernel's measured table
  PolicyResult policy;
  int kernels_benchmarked = 0;      // measured for this plan
  int kernels_reused = 0;           // taken from the database
  double optimize_seconds = 0.0;    // wall time of the whole planning (set by plan_model)
  std::vector<ir::NodeId> side_steps;  // Conv nodes the plan runs on the side stream
};

// The plan of `graph` for `device` ("cpu" or "cuda") from `timings`: every
// convolution step (Conv, ConvGradData, ConvGradFilter: ir::is_convolution) gets
// its kernel's configuration and slice, every other step the workspace described
// above. Backward convolutions stay on the main stream (only Conv nodes are side-
// stream candidates), but their slices count for what a side step overlaps.
// InvalidArgument when the timings do not describe the graph's convolutions
// (count, node ids, directions); Unsupported when convolutions run at different
// batch sizes; the policy's own errors (kInfeasible) otherwise.
Expected<PlanResult> plan_from_timings(const ir::Graph& graph, const std::string& device,
                                       const PlannerOptions& options, GraphTimings timings);

}  // namespace ucudnn::optimizer
