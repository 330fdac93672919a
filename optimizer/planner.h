// The planner: from a graph and a workspace policy to a runtime::Plan.
//
// Stages: collect the distinct convolution kernels → for each, timings from the
// benchmark database or, when missing, from the benchmarker (stored back) →
// the policy (undivided, wr or wd; optimizer/policies.h) → per Conv step its
// micro-batches and workspace slice → with two streams, the side-stream steps
// and their slices (runtime/executor/side_stream.h) → activation memory by liveness.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "optimizer/bench/benchmark_db.h"
#include "optimizer/bench/benchmarker.h"
#include "optimizer/conv_kernels.h"
#include "optimizer/policies.h"
#include "runtime/executor/plan.h"

namespace ucudnn::optimizer {

enum class Policy { kUndivided, kWr, kWd };
const char* policy_name(Policy policy);
// "undivided", "wr", "wd"; InvalidArgument otherwise.
Expected<Policy> parse_policy(const std::string& name);
Expected<BatchSizePolicy> parse_batch_size_policy(const std::string& name);

struct PlannerOptions {
  Policy policy = Policy::kUndivided;
  size_t workspace_bytes = size_t{64} << 20;  // per kernel (undivided, wr) or in total (wd)
  BatchSizePolicy batch_sizes = BatchSizePolicy::kPowerOfTwo;
  double division_threshold = kDefaultDivisionThreshold;
  bool share_workspace = false;  // wd: kernels that never overlap share bytes (policies.h)
  int streams = 1;               // 2: independent convolutions on a side stream (Note [side stream])
  bool rebenchmark = false;   // ignore stored timings and measure again
  bool progress = true;       // progress bar on stderr (only when stderr is a terminal)
};

struct PlanResult {
  runtime::Plan plan;
  PlannerOptions options;           // what was asked for
  std::vector<ConvKernel> kernels;  // same order as policy.kernels and timings
  std::vector<NamedKernel> timings; // each kernel's measured table (name: node + shapes)
  PolicyResult policy;
  int kernels_benchmarked = 0;      // measured in this run
  int kernels_reused = 0;           // taken from the database
  double optimize_seconds = 0.0;    // wall time of the whole planning
  std::vector<ir::NodeId> side_steps;  // Conv nodes the plan runs on the side stream
};

// Plans `graph`: workspace-dependent steps (Conv) get their configuration and
// slice; every other step its own (workspace-free or small) default. `db` may be null.
// `device` names the executor ("cpu" or "cuda"); `workspace_of` answers the
// workspace a non-convolution step needs.
Expected<PlanResult> plan_graph(const ir::Graph& graph, const std::string& device, const PlannerOptions& options,
                                Benchmarker& benchmarker, BenchmarkDb* db,
                                size_t (*workspace_of)(const ir::Graph&, const ir::Node&));

}  // namespace ucudnn::optimizer
