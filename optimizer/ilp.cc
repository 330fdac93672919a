// Solver-independent parts of the workspace-division ILP: validation, the
// smallest feasible budget, constraint checks and the exhaustive reference solver.
#include "optimizer/ilp.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

namespace ucudnn::optimizer {
namespace {

std::string kernel_label(const IlpProblem& problem, size_t k) {
  if (k < problem.kernel_names.size() && !problem.kernel_names[k].empty()) {
    return "kernel '" + problem.kernel_names[k] + "'";
  }
  return "kernel " + std::to_string(k);
}

// a + b, or SIZE_MAX when that overflows (sums of workspaces under an unlimited budget).
size_t saturating_add(size_t a, size_t b) {
  return a > std::numeric_limits<size_t>::max() - b ? std::numeric_limits<size_t>::max() : a + b;
}

size_t min_workspace(const std::vector<IlpOption>& options) {
  size_t lowest = std::numeric_limits<size_t>::max();
  for (const IlpOption& o : options) lowest = std::min(lowest, o.workspace_bytes);
  return lowest;
}

}  // namespace

std::vector<std::vector<int>> effective_sets(const IlpProblem& problem) {
  const int count = static_cast<int>(problem.kernels.size());
  std::vector<std::vector<int>> sets;
  if (problem.concurrent_sets.empty()) {
    std::vector<int> all(count);
    for (int k = 0; k < count; ++k) all[k] = k;
    sets.push_back(std::move(all));
    return sets;
  }
  std::vector<char> covered(count, 0);
  for (const auto& set : problem.concurrent_sets) {
    std::vector<int> unique = set;
    std::sort(unique.begin(), unique.end());
    unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
    for (int k : unique) {
      if (k >= 0 && k < count) covered[k] = 1;
    }
    sets.push_back(std::move(unique));
  }
  for (int k = 0; k < count; ++k) {
    if (!covered[k]) sets.push_back({k});
  }
  return sets;
}

Status validate_ilp(const IlpProblem& problem) {
  for (size_t k = 0; k < problem.kernels.size(); ++k) {
    if (problem.kernels[k].empty()) return invalid_argument("ILP: " + kernel_label(problem, k) + " has no options");
    for (const IlpOption& o : problem.kernels[k]) {
      if (!(o.time_ms >= 0) || !std::isfinite(o.time_ms)) {
        return invalid_argument("ILP: " + kernel_label(problem, k) + " has an option with time " +
                                std::to_string(o.time_ms) + " ms (must be finite and ≥ 0)");
      }
    }
  }
  for (size_t s = 0; s < problem.concurrent_sets.size(); ++s) {
    for (int k : problem.concurrent_sets[s]) {
      if (k < 0 || static_cast<size_t>(k) >= problem.kernels.size()) {
        return invalid_argument("ILP: concurrent set " + std::to_string(s) + " names kernel " +
                                std::to_string(k) + " but there are " +
                                std::to_string(problem.kernels.size()) + " kernels");
      }
    }
  }
  return Status::ok();
}

size_t smallest_feasible_budget(const IlpProblem& problem) {
  size_t worst = 0;
  for (const auto& set : effective_sets(problem)) {
    size_t sum = 0;
    for (int k : set) {
      if (!problem.kernels[k].empty()) sum = saturating_add(sum, min_workspace(problem.kernels[k]));
    }
    worst = std::max(worst, sum);
  }
  return worst;
}

Status check_budget(const IlpProblem& problem) {
  std::vector<int> smallest_choice;
  for (const auto& options : problem.kernels) {
    const auto it = std::min_element(options.begin(), options.end(), [](const IlpOption& a, const IlpOption& b) {
      return a.workspace_bytes < b.workspace_bytes;
    });
    smallest_choice.push_back(static_cast<int>(it - options.begin()));
  }
  // Checked with the choice itself, not the (saturated) smallest budget, which can exceed any size_t.
  if (satisfies_constraints(problem, smallest_choice)) return Status::ok();
  const size_t smallest = smallest_feasible_budget(problem);
  const std::string needed = smallest == std::numeric_limits<size_t>::max() ? "at least " + std::to_string(smallest)
                                                                           : std::to_string(smallest);
  return infeasible("workspace budget of " + std::to_string(problem.budget_bytes) +
                    " bytes is too small for " + std::to_string(problem.kernels.size()) +
                    " kernels; the smallest feasible budget is " + needed + " bytes");
}

bool satisfies_constraints(const IlpProblem& problem, const std::vector<int>& choice) {
  if (choice.size() != problem.kernels.size()) return false;
  for (size_t k = 0; k < choice.size(); ++k) {
    if (choice[k] < 0 || static_cast<size_t>(choice[k]) >= problem.kernels[k].size()) return false;
  }
  for (const auto& set : effective_sets(problem)) {
    size_t sum = 0;
    for (int k : set) {
      const size_t w = problem.kernels[k][choice[k]].workspace_bytes;
      if (w > problem.budget_bytes - sum) return false;  // sum + w > M, without overflow (sum ≤ M here)
      sum += w;
    }
  }
  return true;
}

Expected<IlpSolution> solve_ilp_exhaustive(const IlpProblem& problem, size_t max_combinations) {
  UCUDNN_RETURN_IF_ERROR(validate_ilp(problem));
  UCUDNN_RETURN_IF_ERROR(check_budget(problem));
  const auto start = std::chrono::steady_clock::now();
  size_t combinations = 1;
  for (const auto& options : problem.kernels) {
    if (combinations > max_combinations / options.size()) {
      return invalid_argument("ILP: exhaustive search over more than " + std::to_string(max_combinations) +
                              " combinations refused; use solve_ilp");
    }
    combinations *= options.size();
  }
  std::vector<int> choice(problem.kernels.size(), 0);
  IlpSolution best;
  best.objective_ms = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < combinations; ++i) {
    if (satisfies_constraints(problem, choice)) {
      double total = 0;
      for (size_t k = 0; k < choice.size(); ++k) total += problem.kernels[k][choice[k]].time_ms;
      if (total < best.objective_ms) {
        best.objective_ms = total;
        best.choice = choice;
      }
    }
    // Next combination (odometer).
    for (size_t k = 0; k < choice.size(); ++k) {
      if (++choice[k] < static_cast<int>(problem.kernels[k].size())) break;
      choice[k] = 0;
    }
  }
  if (best.choice.size() != problem.kernels.size()) {
    return internal_error("ILP: exhaustive search found no solution although the budget check passed");
  }
  best.gap = 0.0;
  best.status = "exhaustive";
  best.solve_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return best;
}

}  // namespace ucudnn::optimizer
