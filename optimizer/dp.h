// Per-kernel micro-batch optimisation (μ-cuDNN's dynamic programme).
//
// A configuration cuts the mini-batch B into micro-batches, each run with one
// algorithm; its time is the sum of the parts' times and its workspace the
// maximum of theirs (the parts run one after another and reuse one buffer).
//   fastest_configuration: T[b] = min over allowed m ≤ b of T[b−m] + best(m, limit).
//   pareto_front: the same recursion keeping every non-dominated (time, workspace)
//     point per prefix size b; input to the workspace-division ILP.
//   choose_with_threshold: accept a division only when it beats the undivided
//     configuration at the same limit by more than a relative threshold, so
//     measurement noise does not buy divisions.
// Assumptions: timings are per micro-batch size as measured; a size that was not
// measured is simply not usable. All functions are pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "optimizer/benchmark_table.h"
#include "runtime/core/status.h"
#include "runtime/plan/plan.h"

namespace ucudnn::optimizer {

// One part of a configuration: the plan's own type (runtime/plan/plan.h).
using MicroBatch = runtime::MicroBatch;

struct Configuration {
  std::vector<MicroBatch> parts;  // sizes sum to B; largest first
  double time_ms = 0.0;           // Σ of the parts' times
  size_t workspace_bytes = 0;     // max of the parts' workspaces
  bool is_divided() const { return parts.size() > 1; }
};

// Default relative margin a division must win by (2 %).
inline constexpr double kDefaultDivisionThreshold = 0.02;

// The fastest configuration of `batch` using only `sizes` whose parts each fit
// `workspace_limit`. kInfeasible (naming `kernel` and the smallest workspace that
// would work) when none fits; kInvalidArgument when batch < 1.
Expected<Configuration> fastest_configuration(const KernelTimings& timings, int64_t batch,
                                              size_t workspace_limit,
                                              const std::vector<int64_t>& sizes,
                                              const std::string& kernel = "kernel");

// The fastest single algorithm at the full batch within the limit (one part).
Expected<Configuration> undivided_configuration(const KernelTimings& timings, int64_t batch,
                                                size_t workspace_limit,
                                                const std::string& kernel = "kernel");

// Every non-dominated (time, workspace) configuration of `batch`, sorted by
// increasing workspace (hence decreasing time). A point dominates another when it
// is ≤ in both and < in one; among equal points one is kept. kInfeasible when no
// configuration exists at any workspace.
Expected<std::vector<Configuration>> pareto_front(const KernelTimings& timings, int64_t batch,
                                                  const std::vector<int64_t>& sizes,
                                                  const std::string& kernel = "kernel");

// The divided optimum if it is faster than the undivided optimum at the same limit
// by more than `threshold` (relative), else the undivided one. Falls back to the
// divided optimum when no undivided algorithm fits.
Expected<Configuration> choose_with_threshold(const KernelTimings& timings, int64_t batch,
                                              size_t workspace_limit,
                                              const std::vector<int64_t>& sizes,
                                              double threshold = kDefaultDivisionThreshold,
                                              const std::string& kernel = "kernel");

// The smallest workspace limit under which some configuration of `batch` using
// `sizes` exists; nullopt when none exists at any limit.
std::optional<size_t> smallest_feasible_workspace(const KernelTimings& timings, int64_t batch,
                                                  const std::vector<int64_t>& sizes);

}  // namespace ucudnn::optimizer
