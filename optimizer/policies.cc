// undivided / wr / wd policies: per-kernel DP or Pareto fronts plus the ILP,
// turned into KernelPlans with workspace slices.
#include "optimizer/policies.h"

#include <algorithm>
#include <limits>

namespace ucudnn::optimizer {
namespace {

constexpr size_t kNoLimit = std::numeric_limits<size_t>::max();

double undivided_time(const KernelTimings& timings, int64_t batch, size_t limit) {
  auto best = fastest_algorithm(timings, batch, limit);
  return best ? best->time_ms : -1.0;
}

int64_t batch_of(const NamedKernel& kernel, int64_t batch) { return kernel.batch > 0 ? kernel.batch : batch; }

KernelPlan make_plan(const NamedKernel& kernel, Configuration config, int64_t batch, size_t limit) {
  batch = batch_of(kernel, batch);
  KernelPlan plan;
  plan.kernel = kernel.name;
  plan.workspace_size = config.workspace_bytes;
  plan.config = std::move(config);
  plan.undivided_time_ms = undivided_time(kernel.timings, batch, limit);
  plan.unlimited_time_ms = undivided_time(kernel.timings, batch, kNoLimit);
  return plan;
}

double weighted_total(const std::vector<NamedKernel>& kernels, const PolicyResult& result) {
  double total = 0;
  for (size_t k = 0; k < kernels.size(); ++k) total += kernels[k].calls * result.kernels[k].config.time_ms;
  return total;
}

// undivided and wr: each kernel chooses alone within the per-kernel limit, and
// all of them time-share one pool as large as the largest choice.
template <typename Choose>
Expected<PolicyResult> plan_time_shared(const std::vector<NamedKernel>& kernels, int64_t batch,
                                        size_t per_kernel_limit, Choose choose) {
  PolicyResult result;
  for (const NamedKernel& kernel : kernels) {
    UCUDNN_ASSIGN_OR_RETURN(Configuration config, choose(kernel));
    result.pool_bytes = std::max(result.pool_bytes, config.workspace_bytes);
    result.kernels.push_back(make_plan(kernel, std::move(config), batch, per_kernel_limit));
  }
  result.total_time_ms = weighted_total(kernels, result);
  return result;
}

}  // namespace

Expected<PolicyResult> plan_undivided(const std::vector<NamedKernel>& kernels, int64_t batch,
                                      size_t per_kernel_limit) {
  return plan_time_shared(kernels, batch, per_kernel_limit, [&](const NamedKernel& kernel) {
    return undivided_configuration(kernel.timings, batch_of(kernel, batch), per_kernel_limit, kernel.name);
  });
}

Expected<PolicyResult> plan_wr(const std::vector<NamedKernel>& kernels, int64_t batch, size_t per_kernel_limit,
                               const PolicyOptions& options) {
  return plan_time_shared(kernels, batch, per_kernel_limit, [&](const NamedKernel& kernel) {
    const int64_t b = batch_of(kernel, batch);
    return choose_with_threshold(kernel.timings, b, per_kernel_limit, micro_batch_sizes(options.batch_sizes, b),
                                 options.division_threshold, kernel.name);
  });
}

Expected<PolicyResult> plan_wd(const std::vector<NamedKernel>& kernels, int64_t batch, size_t total_budget,
                               const PolicyOptions& options) {
  // Per kernel: its Pareto front, with divisions that do not beat the undivided
  // choice at the same workspace by the threshold replaced by that choice.
  std::vector<std::vector<Configuration>> fronts;
  IlpProblem problem;
  problem.budget_bytes = total_budget;
  for (const NamedKernel& kernel : kernels) {
    const int64_t b = batch_of(kernel, batch);
    UCUDNN_ASSIGN_OR_RETURN(std::vector<Configuration> front,
                            pareto_front(kernel.timings, b, micro_batch_sizes(options.batch_sizes, b), kernel.name));
    std::vector<Configuration> kept;
    for (Configuration& config : front) {
      if (config.is_divided()) {
        Expected<Configuration> undivided =
            undivided_configuration(kernel.timings, b, config.workspace_bytes, kernel.name);
        if (undivided && undivided->time_ms - config.time_ms <= options.division_threshold * undivided->time_ms) {
          config = std::move(undivided).value();
        }
      }
      // Replacements can duplicate or dominate neighbours; keep the front clean.
      bool dominated = false;
      for (const Configuration& other : kept) {
        if (other.time_ms <= config.time_ms && other.workspace_bytes <= config.workspace_bytes) dominated = true;
      }
      if (dominated) continue;
      std::erase_if(kept, [&](const Configuration& other) {
        return config.time_ms <= other.time_ms && config.workspace_bytes <= other.workspace_bytes;
      });
      kept.push_back(std::move(config));
    }
    std::vector<IlpOption> ilp_options;
    for (const Configuration& config : kept) {
      ilp_options.push_back({kernel.calls * config.time_ms, align_up(config.workspace_bytes, kWorkspaceAlignment)});
    }
    problem.kernels.push_back(std::move(ilp_options));
    problem.kernel_names.push_back(kernel.name);
    fronts.push_back(std::move(kept));
  }
  auto solve = [&](const IlpProblem& p) {
    return options.exhaustive_ilp ? solve_ilp_exhaustive(p) : solve_ilp(p, options.ilp_time_limit_s);
  };
  PolicyResult result;
  if (options.share_workspace) {
    // What the paper's model would reach at this budget, for the report; it may be
    // infeasible where sharing is not.
    Expected<IlpSolution> unshared = solve(problem);
    if (unshared) result.unshared_time_ms = unshared->objective_ms;
    for (size_t k = 0; k < kernels.size(); ++k) problem.concurrent_sets.push_back({static_cast<int>(k)});
    for (const std::vector<int>& set : options.concurrent_kernels) problem.concurrent_sets.push_back(set);
  }
  Expected<IlpSolution> solution = solve(problem);
  if (!solution) return solution.status().with_context("policy wd, total budget " + std::to_string(total_budget) + " bytes");

  size_t offset = 0;
  for (size_t k = 0; k < kernels.size(); ++k) {
    const int choice = solution->choice[k];
    const size_t slice = problem.kernels[k][choice].workspace_bytes;
    KernelPlan plan = make_plan(kernels[k], fronts[k][choice], batch, slice);
    plan.workspace_offset = options.share_workspace ? 0 : offset;
    plan.workspace_size = slice;
    offset += slice;
    result.pool_bytes = options.share_workspace ? std::max(result.pool_bytes, slice) : offset;
    result.kernels.push_back(std::move(plan));
  }
  result.total_time_ms = weighted_total(kernels, result);
  result.ilp = std::move(solution).value();
  return result;
}

}  // namespace ucudnn::optimizer
