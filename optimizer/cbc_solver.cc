// solve_ilp: the workspace-division ILP (ilp.h) solved with COIN-OR CBC.
// This is the only file that includes CBC headers.
//
// Note [exact byte budgets with CBC]: the result must fit the budget to the byte
// and be the optimum even when the optimum fills the budget exactly (the plan's
// own pool is such a budget: issue 11). CBC cannot be given bytes directly: with
// coefficients near 2^30 it accepts an LP solution one byte over a row (within
// its tolerances), finds it "integral", discards it "on closer inspection" and
// drops the node without branching — losing every solution below it (CBC
// 2.10.8; on random instances from about 1e7 units per coefficient). So:
//   1. Units. Workspaces are written in units of g, the gcd of every workspace
//      that can be chosen: for multiples of g, Σ w ≤ M ⟺ Σ w/g ≤ ⌊M/g⌋, so
//      nothing is lost (the policies align slices to 256 bytes). Only when that
//      leaves coefficients above kMaxUnits is g made coarser, and then each w is
//      rounded down: floor(w/g) ≤ ⌊M/g⌋ is a relaxation — every choice that fits
//      in bytes satisfies it — so CBC's optimum of it is a lower bound.
//   2. Cuts. A CBC solution is checked in bytes. If a set is over, a cover cut
//      excludes it and every choice using at least as many bytes per kernel of a
//      minimal violated subset (all over the budget too), and CBC solves again.
//      The first CBC optimum that fits in bytes is the optimum. (An earlier model
//      rounded ceil(w/g) instead, fit the budget but missed optima by up to 3 %.)
//   3. No slack in CBC: allowable gaps 0, a cutoff increment near 0 (the default
//      1e-5 prunes nodes that could improve by less) and an integrality tolerance
//      under 1/4 unit per row.
// "optimal" means CBC proved it; when the time limit stops the rounds, the best
// choice that fits is returned as "feasible, not proven optimal (time limit)"
// with the gap to the best lower bound.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include <CbcModel.hpp>
#include <CoinPackedMatrix.hpp>
#include <CoinPackedVector.hpp>
#include <OsiClpSolverInterface.hpp>

#include "optimizer/ilp.h"

namespace ucudnn::optimizer {
namespace {

// Workspace coefficients CBC sees stay at most this many units: at 1e7 units
// CBC 2.10.8 already misses optima by accepting rows one unit over (measured on
// random instances), at 1e5 a unit is far above every tolerance.
constexpr double kMaxUnits = 1e5;

// Sums of workspaces, exact: up to 2^64 kernels of up to 2^64 − 1 bytes each.
using ByteSum = unsigned __int128;

ByteSum bytes_in_set(const IlpProblem& problem, const std::vector<int>& set, const std::vector<int>& choice) {
  ByteSum sum = 0;
  for (int k : set) sum += problem.kernels[k][choice[k]].workspace_bytes;
  return sum;
}

// A row Σ coefficient·x ≤ rhs over the model's columns.
struct Row {
  std::vector<int> columns;
  std::vector<double> coefficients;
  double rhs = 0.0;
};

// The relaxation CBC solves (Note [exact byte budgets with CBC]): per set a row in
// units of g with floor(w/g), right-hand side floor(M/g), plus the cover cuts
// added so far. Options over the budget on their own are fixed to 0.
struct ScaledModel {
  size_t unit = 1;
  bool exact = true;  // every allowed workspace is a multiple of `unit`
  std::vector<int> first;  // first column of each kernel
  int column_count = 0;
  std::vector<char> allowed;  // per column
  std::vector<Row> rows;
  double largest_row_sum = 0.0;
};

ScaledModel build_scaled_model(const IlpProblem& problem, const std::vector<std::vector<int>>& sets) {
  ScaledModel model;
  size_t g = 0, largest = 0;
  for (const auto& options : problem.kernels) {
    model.first.push_back(model.column_count);
    model.column_count += static_cast<int>(options.size());
    for (const IlpOption& o : options) {
      const bool fits = o.workspace_bytes <= problem.budget_bytes;
      model.allowed.push_back(fits ? 1 : 0);
      if (fits) g = std::gcd(g, o.workspace_bytes), largest = std::max(largest, o.workspace_bytes);
    }
  }
  // The gcd loses nothing; a coarser unit only when the gcd leaves coefficients too large.
  g = std::max<size_t>(g, 1);
  const double scale = std::ceil(static_cast<double>(largest / g) / kMaxUnits);
  model.unit = scale > 1 ? g * static_cast<size_t>(scale) : g;
  model.exact = model.unit == g;
  const double rhs = static_cast<double>(problem.budget_bytes / model.unit);
  for (const auto& set : sets) {
    ByteSum largest_sum = 0;  // bytes: a row no choice can exceed is left out
    Row row;
    row.rhs = rhs;
    double row_sum = 0.0;
    for (int k : set) {
      size_t kernel_largest = 0;
      for (size_t c = 0; c < problem.kernels[k].size(); ++c) {
        const int col = model.first[k] + static_cast<int>(c);
        if (!model.allowed[col]) continue;
        const size_t w = problem.kernels[k][c].workspace_bytes;
        kernel_largest = std::max(kernel_largest, w);
        if (w / model.unit == 0) continue;
        row.columns.push_back(col);
        row.coefficients.push_back(static_cast<double>(w / model.unit));
        row_sum += row.coefficients.back();
      }
      largest_sum += kernel_largest;
    }
    if (largest_sum <= problem.budget_bytes) continue;
    model.largest_row_sum = std::max(model.largest_row_sum, row_sum);
    model.rows.push_back(std::move(row));
  }
  return model;
}

// For a choice over the budget in `set`: a cut that excludes it and every choice
// needing at least as many bytes per kernel in a minimal violated subset —
// all of them over the budget too, so no solution that fits is lost.
Row cover_cut(const IlpProblem& problem, const ScaledModel& model, const std::vector<int>& set,
              const std::vector<int>& choice) {
  std::vector<int> cover;
  for (int k : set) {
    if (problem.kernels[k][choice[k]].workspace_bytes != 0) cover.push_back(k);
  }
  ByteSum sum = bytes_in_set(problem, cover, choice);
  // Minimal: drop the smallest workspaces while the rest still exceeds M.
  std::sort(cover.begin(), cover.end(), [&](int a, int b) {
    return problem.kernels[a][choice[a]].workspace_bytes < problem.kernels[b][choice[b]].workspace_bytes;
  });
  while (!cover.empty() && sum - problem.kernels[cover.front()][choice[cover.front()]].workspace_bytes > problem.budget_bytes) {
    sum -= problem.kernels[cover.front()][choice[cover.front()]].workspace_bytes;
    cover.erase(cover.begin());
  }
  Row cut;
  cut.rhs = static_cast<double>(cover.size()) - 1.0;
  for (int k : cover) {
    const size_t w = problem.kernels[k][choice[k]].workspace_bytes;
    for (size_t c = 0; c < problem.kernels[k].size(); ++c) {
      const int col = model.first[k] + static_cast<int>(c);
      if (model.allowed[col] && problem.kernels[k][c].workspace_bytes >= w) {
        cut.columns.push_back(col);
        cut.coefficients.push_back(1.0);
      }
    }
  }
  return cut;
}

struct CbcResult {
  bool has_solution = false;
  bool proven_optimal = false;
  bool time_limit = false;
  std::vector<int> choice;
  double bound = 0.0;  // CBC's best possible objective
};

// Solves the scaled model with CBC, starting from `start` (a choice that fits in bytes).
CbcResult solve_scaled(const IlpProblem& problem, const ScaledModel& scaled, const std::vector<int>& start,
                       double time_limit_s) {
  const int column_count = scaled.column_count;
  OsiClpSolverInterface solver;
  solver.messageHandler()->setLogLevel(0);
  std::vector<double> lower(column_count, 0.0), upper(column_count, 1.0), objective(column_count);
  for (size_t k = 0; k < problem.kernels.size(); ++k) {
    for (size_t c = 0; c < problem.kernels[k].size(); ++c) {
      const int col = scaled.first[k] + static_cast<int>(c);
      objective[col] = problem.kernels[k][c].time_ms;
      if (!scaled.allowed[col]) upper[col] = 0.0;  // over the budget on its own
    }
  }
  CoinPackedMatrix matrix(false, 0, 0);
  matrix.setDimensions(0, column_count);
  std::vector<double> row_lower, row_upper;
  for (size_t k = 0; k < problem.kernels.size(); ++k) {  // Σ_c x[k,c] = 1
    CoinPackedVector row;
    for (size_t c = 0; c < problem.kernels[k].size(); ++c) row.insert(scaled.first[k] + static_cast<int>(c), 1.0);
    matrix.appendRow(row);
    row_lower.push_back(1.0);
    row_upper.push_back(1.0);
  }
  for (const Row& r : scaled.rows) {  // Σ_{k∈S} floor(w/g)·x ≤ floor(M/g), and the cuts
    if (r.columns.empty()) continue;
    matrix.appendRow(CoinPackedVector(static_cast<int>(r.columns.size()), r.columns.data(), r.coefficients.data()));
    row_lower.push_back(-solver.getInfinity());
    row_upper.push_back(r.rhs);
  }
  solver.loadProblem(matrix, lower.data(), upper.data(), objective.data(), row_lower.data(), row_upper.data());
  for (int col = 0; col < column_count; ++col) solver.setInteger(col);

  CbcModel model(solver);
  model.setLogLevel(0);
  model.messageHandler()->setLogLevel(0);
  model.solver()->messageHandler()->setLogLevel(0);
  model.setMaximumSeconds(time_limit_s);
  // Rounding what CBC accepts as integral moves a row by less than 1/4 unit.
  model.setIntegerTolerance(std::min(1e-7, 0.25 / std::max(1.0, scaled.largest_row_sum)));
  // Stop only at a proof: no allowable gap, and no cutoff increment (CBC's
  // default 1e-5 prunes nodes that could improve by less than that).
  model.setAllowableGap(0.0);
  model.setAllowableFractionGap(0.0);
  model.setAllowablePercentageGap(0.0);
  model.setCutoffIncrement(1e-12);
  std::vector<double> x(column_count, 0.0);
  double value = 0.0;
  for (size_t k = 0; k < start.size(); ++k) {
    x[scaled.first[k] + start[k]] = 1.0;
    value += problem.kernels[k][start[k]].time_ms;
  }
  model.setBestSolution(x.data(), column_count, value, false);
  model.branchAndBound();

  CbcResult result;
  result.time_limit = model.isSecondsLimitReached();
  result.proven_optimal = model.isProvenOptimal() && !result.time_limit;
  result.bound = model.getBestPossibleObjValue();
  const double* best = model.bestSolution();
  if (best == nullptr) return result;
  result.has_solution = true;
  for (size_t k = 0; k < problem.kernels.size(); ++k) {
    int chosen = 0;
    for (size_t c = 1; c < problem.kernels[k].size(); ++c) {
      if (best[scaled.first[k] + static_cast<int>(c)] > best[scaled.first[k] + chosen]) chosen = static_cast<int>(c);
    }
    result.choice.push_back(chosen);
  }
  return result;
}

double objective_of(const IlpProblem& problem, const std::vector<int>& choice) {
  double total = 0.0;
  for (size_t k = 0; k < choice.size(); ++k) total += problem.kernels[k][choice[k]].time_ms;
  return total;
}

// Per kernel the option that is best by `better` (first wins ties).
template <typename Better>
std::vector<int> pick_per_kernel(const IlpProblem& problem, Better better) {
  std::vector<int> choice(problem.kernels.size(), 0);
  for (size_t k = 0; k < problem.kernels.size(); ++k) {
    for (size_t c = 1; c < problem.kernels[k].size(); ++c) {
      if (better(problem.kernels[k][c], problem.kernels[k][choice[k]])) choice[k] = static_cast<int>(c);
    }
  }
  return choice;
}

// Per kernel its fastest option; among equally fast ones the smallest workspace.
std::vector<int> fastest_options(const IlpProblem& problem) {
  return pick_per_kernel(problem, [](const IlpOption& o, const IlpOption& b) {
    return o.time_ms < b.time_ms || (o.time_ms == b.time_ms && o.workspace_bytes < b.workspace_bytes);
  });
}

// Per kernel its smallest-workspace option (fastest among equals): feasible
// whenever check_budget passed, so CBC always starts from a solution.
std::vector<int> smallest_options(const IlpProblem& problem) {
  return pick_per_kernel(problem, [](const IlpOption& o, const IlpOption& b) {
    return o.workspace_bytes < b.workspace_bytes || (o.workspace_bytes == b.workspace_bytes && o.time_ms < b.time_ms);
  });
}

// Σ over kernels of the fastest option within the budget: a lower bound on the optimum.
double fastest_fitting_sum(const IlpProblem& problem) {
  double total = 0.0;
  for (const auto& options : problem.kernels) {
    double fastest = std::numeric_limits<double>::infinity();
    for (const IlpOption& o : options) {
      if (o.workspace_bytes <= problem.budget_bytes) fastest = std::min(fastest, o.time_ms);
    }
    total += fastest;
  }
  return total;
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
  ScaledModel scaled = build_scaled_model(problem, sets);
  // Note [exact byte budgets with CBC]: solve the relaxation; a solution over the
  // budget in bytes is cut off and the relaxation solved again.
  std::vector<int> incumbent = smallest_options(problem);
  double bound = fastest_fitting_sum(problem);
  bool proven = false, time_limit = false;
  int rounds = 0;
  while (true) {
    const double remaining = time_limit_s - elapsed();
    if (remaining <= 0) {
      time_limit = true;
      break;
    }
    CbcResult cbc = solve_scaled(problem, scaled, incumbent, remaining);
    ++rounds;
    if (std::isfinite(cbc.bound)) bound = std::max(bound, cbc.bound);  // a relaxation's bound holds for M
    time_limit = cbc.time_limit;
    if (!cbc.has_solution) break;
    bool fits = true;
    for (const auto& set : sets) {
      if (bytes_in_set(problem, set, cbc.choice) > problem.budget_bytes) {
        fits = false;
        scaled.rows.push_back(cover_cut(problem, scaled, set, cbc.choice));
      }
    }
    if (fits) {
      if (objective_of(problem, cbc.choice) < objective_of(problem, incumbent)) incumbent = cbc.choice;
      proven = cbc.proven_optimal;
      break;
    }
    if (cbc.time_limit) break;
  }
  if (!satisfies_constraints(problem, incumbent)) {
    return internal_error("ILP: the chosen options exceed the workspace budget of " +
                          std::to_string(problem.budget_bytes) + " bytes; see Note [exact byte budgets with CBC]");
  }
  solution.choice = std::move(incumbent);
  solution.objective_ms = objective_of(problem, solution.choice);
  solution.solve_seconds = elapsed();
  solution.rounds = rounds;
  if (proven) {
    solution.status = "optimal";
    return solution;
  }
  solution.gap = solution.objective_ms > 0 ? std::max(0.0, (solution.objective_ms - bound) / solution.objective_ms) : 0.0;
  solution.status = time_limit ? "feasible, not proven optimal (time limit)" : "feasible, not proven optimal";
  return solution;
}

}  // namespace ucudnn::optimizer
