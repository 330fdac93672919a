// solve_ilp: the workspace-division ILP (ilp.h) solved with COIN-OR CBC.
// This is the only file that includes CBC headers.
//
// Note [exact byte budgets with CBC]: CBC accepts an LP solution as integral
// when every x is within its integrality tolerance of 0 or 1. With workspace
// coefficients near 2^30 a fractional x = 1 − 5e-10 can fill a budget exactly
// although the rounded choice is one byte over; CBC then discards that solution
// "on closer inspection" and declares the node infeasible without branching
// (seen with CBC 2.10.8). So the model uses integer workspace units of g bytes,
// g chosen so no coefficient exceeds kMaxUnits: any fractional x then differs
// from 0/1 by at least 1/kMaxUnits, far above the tolerance. Two models:
//   conservative: ceil(w/g) ≤ floor(M/g) — its solutions fit M exactly in bytes;
//   optimistic:   floor(w/g) ≤ floor(M/g) — a relaxation: every exact solution
//                 fits it, so its optimum is a lower bound.
// The conservative solution is returned; the gap is measured against the
// optimistic bound (both coincide when every w is a multiple of g).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <vector>

#include <CbcModel.hpp>
#include <CoinPackedMatrix.hpp>
#include <CoinPackedVector.hpp>
#include <OsiClpSolverInterface.hpp>

#include "optimizer/ilp.h"

namespace ucudnn::optimizer {
namespace {

constexpr double kMaxUnits = 1e5;

struct CbcResult {
  bool has_solution = false;
  bool proven_optimal = false;
  bool proven_infeasible = false;
  bool time_limit = false;
  std::vector<int> choice;
  double bound = 0.0;  // CBC's best possible objective
};

// Solves the model with workspace coefficient units[k][c] and right-hand side
// `rhs` for every set (both in units of g bytes). `start`: an optional feasible choice.
CbcResult solve_units(const IlpProblem& problem, const std::vector<std::vector<int>>& sets,
                      const std::vector<std::vector<double>>& units, double rhs,
                      const std::vector<int>* start, double time_limit_s) {
  std::vector<int> first;
  int column_count = 0;
  for (const auto& options : problem.kernels) {
    first.push_back(column_count);
    column_count += static_cast<int>(options.size());
  }
  OsiClpSolverInterface solver;
  solver.messageHandler()->setLogLevel(0);
  std::vector<double> lower(column_count, 0.0), upper(column_count, 1.0), objective(column_count);
  for (size_t k = 0; k < problem.kernels.size(); ++k) {
    for (size_t c = 0; c < problem.kernels[k].size(); ++c) {
      const int col = first[k] + static_cast<int>(c);
      objective[col] = problem.kernels[k][c].time_ms;
      if (units[k][c] > rhs) upper[col] = 0.0;  // can never be chosen
    }
  }
  CoinPackedMatrix matrix(false, 0, 0);
  matrix.setDimensions(0, column_count);
  std::vector<double> row_lower, row_upper;
  for (size_t k = 0; k < problem.kernels.size(); ++k) {  // Σ_c x[k,c] = 1
    CoinPackedVector row;
    for (size_t c = 0; c < problem.kernels[k].size(); ++c) row.insert(first[k] + static_cast<int>(c), 1.0);
    matrix.appendRow(row);
    row_lower.push_back(1.0);
    row_upper.push_back(1.0);
  }
  for (const auto& set : sets) {  // Σ_{k∈S} w·x ≤ M
    CoinPackedVector row;
    for (int k : set) {
      for (size_t c = 0; c < problem.kernels[k].size(); ++c) {
        if (units[k][c] != 0.0) row.insert(first[k] + static_cast<int>(c), units[k][c]);
      }
    }
    if (row.getNumElements() == 0) continue;
    matrix.appendRow(row);
    row_lower.push_back(-solver.getInfinity());
    row_upper.push_back(rhs);
  }
  solver.loadProblem(matrix, lower.data(), upper.data(), objective.data(), row_lower.data(), row_upper.data());
  for (int col = 0; col < column_count; ++col) solver.setInteger(col);

  CbcModel model(solver);
  model.setLogLevel(0);
  model.messageHandler()->setLogLevel(0);
  model.solver()->messageHandler()->setLogLevel(0);
  model.setMaximumSeconds(time_limit_s);
  model.setIntegerTolerance(1e-7);
  model.setAllowableGap(1e-9);
  model.setAllowableFractionGap(1e-9);
  if (start != nullptr) {
    std::vector<double> x(column_count, 0.0);
    double value = 0.0;
    for (size_t k = 0; k < start->size(); ++k) {
      x[first[k] + (*start)[k]] = 1.0;
      value += problem.kernels[k][(*start)[k]].time_ms;
    }
    model.setBestSolution(x.data(), column_count, value, false);
  }
  model.branchAndBound();

  CbcResult result;
  result.proven_optimal = model.isProvenOptimal();
  result.proven_infeasible = model.isProvenInfeasible();
  result.time_limit = model.isSecondsLimitReached();
  result.bound = model.getBestPossibleObjValue();
  const double* x = model.bestSolution();
  if (x == nullptr) return result;
  result.has_solution = true;
  for (size_t k = 0; k < problem.kernels.size(); ++k) {
    int best = 0;
    for (size_t c = 1; c < problem.kernels[k].size(); ++c) {
      if (x[first[k] + static_cast<int>(c)] > x[first[k] + best]) best = static_cast<int>(c);
    }
    result.choice.push_back(best);
  }
  return result;
}

double objective_of(const IlpProblem& problem, const std::vector<int>& choice) {
  double total = 0.0;
  for (size_t k = 0; k < choice.size(); ++k) total += problem.kernels[k][choice[k]].time_ms;
  return total;
}

// Per kernel its fastest option; among equally fast ones the smallest workspace.
std::vector<int> fastest_options(const IlpProblem& problem) {
  std::vector<int> choice(problem.kernels.size(), 0);
  for (size_t k = 0; k < problem.kernels.size(); ++k) {
    for (size_t c = 1; c < problem.kernels[k].size(); ++c) {
      const IlpOption& o = problem.kernels[k][c];
      const IlpOption& b = problem.kernels[k][choice[k]];
      if (o.time_ms < b.time_ms || (o.time_ms == b.time_ms && o.workspace_bytes < b.workspace_bytes))
        choice[k] = static_cast<int>(c);
    }
  }
  return choice;
}

}  // namespace

Expected<IlpSolution> solve_ilp(const IlpProblem& problem, double time_limit_s) {
  UCUDNN_RETURN_IF_ERROR(validate_ilp(problem));
  UCUDNN_RETURN_IF_ERROR(check_budget(problem));
  const auto start_time = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_time).count(); };
  IlpSolution solution;
  if (problem.kernels.empty()) {
    solution.status = "trivial";
    return solution;
  }
  // A budget that does not bind — every kernel's fastest option fits, as always
  // under an unlimited one (SIZE_MAX) — needs no ILP: that choice is optimal.
  if (std::vector<int> fastest = fastest_options(problem); satisfies_constraints(problem, fastest)) {
    solution.choice = std::move(fastest);
    solution.objective_ms = objective_of(problem, solution.choice);
    solution.status = "optimal";
    solution.solve_seconds = elapsed();
    return solution;
  }
  const std::vector<std::vector<int>> sets = effective_sets(problem);

  // Units (Note [exact byte budgets with CBC]): options over the budget are never
  // chosen, so only the others decide g.
  size_t largest = 0;
  for (const auto& options : problem.kernels) {
    for (const IlpOption& o : options) {
      if (o.workspace_bytes <= problem.budget_bytes) largest = std::max(largest, o.workspace_bytes);
    }
  }
  const size_t g = std::max<size_t>(1, static_cast<size_t>(std::ceil(static_cast<double>(largest) / kMaxUnits)));
  bool lossless = true;
  std::vector<std::vector<double>> up(problem.kernels.size()), down(problem.kernels.size());
  for (size_t k = 0; k < problem.kernels.size(); ++k) {
    for (const IlpOption& o : problem.kernels[k]) {
      up[k].push_back(static_cast<double>((o.workspace_bytes + g - 1) / g));
      down[k].push_back(static_cast<double>(o.workspace_bytes / g));
      if (o.workspace_bytes % g != 0) lossless = false;
    }
  }
  const double rhs = static_cast<double>(problem.budget_bytes / g);

  // A feasible start in exact bytes: every kernel's smallest-workspace option
  // (check_budget passed). Used by CBC only when it also fits the rounded-up model.
  std::vector<int> smallest(problem.kernels.size(), 0);
  for (size_t k = 0; k < problem.kernels.size(); ++k) {
    for (size_t c = 1; c < problem.kernels[k].size(); ++c) {
      const IlpOption& o = problem.kernels[k][c];
      const IlpOption& b = problem.kernels[k][smallest[k]];
      if (o.workspace_bytes < b.workspace_bytes || (o.workspace_bytes == b.workspace_bytes && o.time_ms < b.time_ms)) {
        smallest[k] = static_cast<int>(c);
      }
    }
  }
  bool start_fits_up = true;
  for (const auto& set : sets) {
    double sum = 0;
    for (int k : set) sum += up[k][smallest[k]];
    if (sum > rhs) start_fits_up = false;
  }

  CbcResult conservative = solve_units(problem, sets, up, rhs, start_fits_up ? &smallest : nullptr, time_limit_s);
  std::vector<int> choice = conservative.has_solution ? conservative.choice : smallest;
  if (!satisfies_constraints(problem, choice)) {
    return internal_error("ILP: CBC's choice exceeds the workspace budget of " + std::to_string(problem.budget_bytes) +
                          " bytes (unit " + std::to_string(g) + " bytes); see Note [exact byte budgets with CBC]");
  }
  solution.choice = std::move(choice);
  solution.objective_ms = objective_of(problem, solution.choice);

  double bound = conservative.bound;
  bool proven = conservative.has_solution && conservative.proven_optimal;
  bool hit_time_limit = conservative.time_limit;
  if (!lossless) {
    const double remaining = std::max(1.0, time_limit_s - elapsed());
    CbcResult optimistic = solve_units(problem, sets, down, rhs, nullptr, remaining);
    hit_time_limit = hit_time_limit || optimistic.time_limit;
    if (optimistic.has_solution && optimistic.proven_optimal) {
      bound = objective_of(problem, optimistic.choice);
      proven = proven && solution.objective_ms <= bound + 1e-9 * std::max(1.0, std::abs(bound));
    } else {
      bound = std::min(bound, optimistic.bound);
      proven = false;
    }
  }
  const double slack = solution.objective_ms - bound;
  solution.gap = solution.objective_ms > 0 && std::isfinite(bound) ? std::max(0.0, slack / solution.objective_ms) : 0.0;
  if (proven) {
    solution.status = "optimal";
    solution.gap = 0.0;
  } else {
    solution.status = hit_time_limit ? "time_limit" : "feasible";
  }
  solution.solve_seconds = elapsed();
  return solution;
}

}  // namespace ucudnn::optimizer
