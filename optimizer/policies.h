// The three workspace policies over a list of kernels (ARCHITECTURE.md, "Policies"):
//   undivided: fastest algorithm at the full batch within the per-kernel limit.
//   wr:  per-kernel limit L, per-kernel DP (with the division threshold); all
//        kernels time-share one pool of size max workspace ≤ L.
//   wd:  total budget M; per-kernel Pareto fronts → ILP → one configuration and
//        one slice [offset, offset+size) of the pool per kernel. Slices are a
//        prefix sum in kernel order (the global-sum model), each rounded up to
//        kWorkspaceAlignment bytes so every slice starts aligned.
// Inputs and outputs are plain data; nothing here touches a GPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "optimizer/benchmark_table.h"
#include "optimizer/dp.h"
#include "optimizer/ilp.h"
#include "runtime/core/bytes.h"
#include "runtime/core/status.h"

namespace ucudnn::optimizer {

inline constexpr size_t kWorkspaceAlignment = kBufferAlignment;

struct NamedKernel {
  std::string name;
  KernelTimings timings;
  int calls = 1;  // call sites with this key (ResNet-50 repeats shapes): times count once per call
  // This kernel's mini-batch, which its micro-batches divide; 0: the batch the policy is given. Kernels of
  // one network may differ (RAFT runs its feature encoder on both frames at once: twice the batch).
  int64_t batch = 0;
};

struct KernelPlan {
  std::string kernel;
  Configuration config;
  size_t workspace_offset = 0;  // into the pool
  size_t workspace_size = 0;    // the slice (wd) or the config's workspace (undivided, wr)
  double undivided_time_ms = -1;  // fastest undivided algorithm within this kernel's limit; -1 if none fits
  double unlimited_time_ms = -1;  // fastest undivided algorithm with no workspace limit
};

struct PolicyResult {
  std::vector<KernelPlan> kernels;
  size_t pool_bytes = 0;
  double total_time_ms = 0.0;  // Σ over kernels of calls × configuration time
  IlpSolution ilp;             // wd only
  // wd with share_workspace: the total time the paper's model (every kernel its
  // own slice, Σ slices ≤ M) would give at the same budget — what sharing buys.
  double unshared_time_ms = -1.0;
};

struct PolicyOptions {
  BatchSizePolicy batch_sizes = BatchSizePolicy::kPowerOfTwo;
  double division_threshold = kDefaultDivisionThreshold;
  double ilp_time_limit_s = 30.0;
  bool exhaustive_ilp = false;  // tests: use solve_ilp_exhaustive instead of CBC
  // wd only. false: μ-cuDNN's model — every kernel owns a slice, Σ slices ≤ M, so
  // kernels could run concurrently. true: kernels that never run at the same time
  // share bytes; with one stream no two kernels overlap, so each kernel alone
  // must fit M and all slices start at offset 0.
  bool share_workspace = false;
  // wd with share_workspace: sets of kernels (indices) that may run at the same
  // time on two streams (Note [side stream]); each set's slices must fit M together.
  std::vector<std::vector<int>> concurrent_kernels;
};

// `batch` is the mini-batch of every kernel whose own NamedKernel::batch is 0.
// kInfeasible naming the kernel and the smallest limit when one kernel has no fitting algorithm.
Expected<PolicyResult> plan_undivided(const std::vector<NamedKernel>& kernels, int64_t batch,
                                      size_t per_kernel_limit);

Expected<PolicyResult> plan_wr(const std::vector<NamedKernel>& kernels, int64_t batch,
                               size_t per_kernel_limit, const PolicyOptions& options = {});

// kInfeasible naming the smallest feasible total budget when M is too small.
Expected<PolicyResult> plan_wd(const std::vector<NamedKernel>& kernels, int64_t batch,
                               size_t total_budget, const PolicyOptions& options = {});

}  // namespace ucudnn::optimizer
