// The workspace-division ILP, independent of any solver.
//
// Kernel k has options c (time t[k,c], workspace w[k,c]); binary x[k,c] picks one:
//   minimise Σ t·x   s.t.  Σ_c x[k,c] = 1 for every k,
//                          Σ_{k∈S} Σ_c w·x ≤ M for every concurrent set S.
// With no concurrent sets there is one set holding every kernel (one global
// sum). With sets, kernels that can never overlap in the schedule may share
// bytes; a kernel listed in no set is constrained alone (its option must fit M).
// solve_ilp uses CBC (cbc_solver.cc, the only file that sees CBC);
// solve_ilp_exhaustive enumerates every combination (tests, tiny instances).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "runtime/core/status.h"

namespace ucudnn::optimizer {

struct IlpOption {
  double time_ms = 0.0;
  size_t workspace_bytes = 0;
};

struct IlpProblem {
  std::vector<std::vector<IlpOption>> kernels;  // options per kernel
  size_t budget_bytes = 0;                      // M
  std::vector<std::vector<int>> concurrent_sets;  // kernel indices; empty = one global sum
  std::vector<std::string> kernel_names;        // optional, for error messages
};

struct IlpSolution {
  std::vector<int> choice;    // option index per kernel
  double objective_ms = 0.0;  // Σ chosen times
  double gap = 0.0;           // relative gap to the solver's bound (0 = proven optimal)
  double solve_seconds = 0.0;
  int rounds = 0;             // CBC solves (cut rounds, Note [exact byte budgets with CBC]); 0 without CBC
  // "optimal" (proven), "exhaustive", "trivial", or "feasible, not proven optimal"
  // (+ " (time limit)" when CBC hit it): a solution that fits, `gap` from the bound.
  std::string status;
};

// The constraint sets the model uses: concurrent_sets plus singletons for
// uncovered kernels, or one set of all kernels when concurrent_sets is empty.
std::vector<std::vector<int>> effective_sets(const IlpProblem& problem);

// kInvalidArgument for an empty option list, a negative/NaN time or a bad set index.
Status validate_ilp(const IlpProblem& problem);

// The smallest M that admits a solution: max over sets of Σ of each kernel's
// minimum workspace (choosing every kernel's minimum satisfies all sets at once);
// SIZE_MAX when a sum does not fit in size_t.
size_t smallest_feasible_budget(const IlpProblem& problem);

// kInfeasible naming the smallest feasible budget when problem.budget_bytes is below it.
Status check_budget(const IlpProblem& problem);

// True when `choice` picks a valid option per kernel and satisfies every set exactly (bytes).
bool satisfies_constraints(const IlpProblem& problem, const std::vector<int>& choice);

// Solves with CBC (log silenced) exactly: the budget is honoured to the byte and,
// unless CBC stops early, the optimum is proven (Note [exact byte budgets with CBC]).
// `time_limit_s` caps the branch and bound; the best solution found is then
// returned with its gap and status "feasible, not proven optimal (time limit)".
Expected<IlpSolution> solve_ilp(const IlpProblem& problem, double time_limit_s = 30.0);

// Enumerates every combination; kInvalidArgument when there are more than
// `max_combinations`.
Expected<IlpSolution> solve_ilp_exhaustive(const IlpProblem& problem,
                                           size_t max_combinations = 10'000'000);

}  // namespace ucudnn::optimizer
