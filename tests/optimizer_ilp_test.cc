// Tests for the workspace-division ILP: CBC against exhaustive search on random
// small instances, a hand-computed optimum, the infeasible-budget message, and
// concurrent sets letting kernels that never overlap share bytes.
#include <gtest/gtest.h>

#include <random>

#include "optimizer/ilp.h"

namespace ucudnn::optimizer {
namespace {

double objective(const IlpProblem& p, const std::vector<int>& choice) {
  double total = 0;
  for (size_t k = 0; k < choice.size(); ++k) total += p.kernels[k][choice[k]].time_ms;
  return total;
}

TEST(Ilp, HandComputedOptimum) {
  // Three kernels, budget 100. Best: k0 option 1 (60 B, 1 ms) + k1 option 1 (40 B, 2 ms)
  // + k2 option 0 (0 B, 5 ms) = 8 ms, 100 B. Greedy "fastest for k2 first" would lose.
  IlpProblem p;
  p.budget_bytes = 100;
  p.kernels = {
      {{10.0, 0}, {1.0, 60}},
      {{6.0, 0}, {2.0, 40}},
      {{5.0, 0}, {4.5, 100}},
  };
  for (bool exhaustive : {false, true}) {
    auto s = exhaustive ? solve_ilp_exhaustive(p) : solve_ilp(p);
    ASSERT_TRUE(s.has_value()) << s.status().to_string();
    EXPECT_EQ(s->choice, (std::vector<int>{1, 1, 0}));
    EXPECT_DOUBLE_EQ(s->objective_ms, 8.0);
    EXPECT_NEAR(s->gap, 0.0, 1e-9);
  }
  auto s = solve_ilp(p);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->status, "optimal");
}

TEST(Ilp, CbcMatchesExhaustiveOnRandomInstances) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> kernel_count(1, 5), option_count(1, 4), ws(0, 400);
  std::uniform_real_distribution<double> time(0.1, 10.0), fraction(0.0, 1.2);
  int solved = 0, infeasible_count = 0;
  for (int trial = 0; trial < 150; ++trial) {
    IlpProblem p;
    const int kernels = kernel_count(rng);
    size_t max_sum = 0;
    for (int k = 0; k < kernels; ++k) {
      std::vector<IlpOption> options;
      size_t max_ws = 0;
      const int count = option_count(rng);
      for (int c = 0; c < count; ++c) {
        options.push_back({time(rng), static_cast<size_t>(ws(rng)) * 1'000'000});  // up to 400 MB
        max_ws = std::max(max_ws, options.back().workspace_bytes);
      }
      max_sum += max_ws;
      p.kernels.push_back(std::move(options));
    }
    p.budget_bytes = static_cast<size_t>(fraction(rng) * static_cast<double>(max_sum));
    if (trial % 3 == 0 && kernels >= 3) {  // some instances with concurrent sets
      p.concurrent_sets = {{0, 1}, {1, 2}};
    }
    auto exact = solve_ilp_exhaustive(p);
    auto cbc = solve_ilp(p);
    ASSERT_EQ(exact.has_value(), cbc.has_value()) << "trial " << trial << ": " << exact.status().to_string()
                                                  << " vs " << cbc.status().to_string();
    if (!exact.has_value()) {
      EXPECT_EQ(cbc.status().code(), StatusCode::kInfeasible);
      ++infeasible_count;
      continue;
    }
    EXPECT_NEAR(cbc->objective_ms, exact->objective_ms, 1e-6) << "trial " << trial;
    EXPECT_TRUE(satisfies_constraints(p, cbc->choice)) << "trial " << trial;
    EXPECT_NEAR(cbc->objective_ms, objective(p, cbc->choice), 1e-9);
    ++solved;
  }
  EXPECT_GT(solved, 60);
  EXPECT_GT(infeasible_count, 3);
}

TEST(Ilp, ArbitraryByteCountsStayFeasibleAndBounded) {
  // Workspaces that are not multiples of CBC's unit (Note [exact byte budgets with
  // CBC]): the choice must fit exactly, never beat the true optimum, and the
  // reported gap must cover the distance to it.
  std::mt19937 rng(11);
  std::uniform_int_distribution<size_t> ws(0, size_t{3} << 30);
  std::uniform_real_distribution<double> time(0.1, 10.0), fraction(0.2, 1.0);
  int optimal = 0;
  for (int trial = 0; trial < 60; ++trial) {
    IlpProblem p;
    size_t max_sum = 0;
    for (int k = 0; k < 4; ++k) {
      std::vector<IlpOption> options = {{20.0, 0}};
      size_t max_ws = 0;
      for (int c = 0; c < 3; ++c) {
        options.push_back({time(rng), ws(rng)});
        max_ws = std::max(max_ws, options.back().workspace_bytes);
      }
      max_sum += max_ws;
      p.kernels.push_back(std::move(options));
    }
    p.budget_bytes = static_cast<size_t>(fraction(rng) * static_cast<double>(max_sum));
    auto exact = solve_ilp_exhaustive(p);
    auto cbc = solve_ilp(p);
    ASSERT_TRUE(exact.has_value() && cbc.has_value()) << cbc.status().to_string();
    EXPECT_TRUE(satisfies_constraints(p, cbc->choice)) << "trial " << trial;
    EXPECT_GE(cbc->objective_ms, exact->objective_ms - 1e-9);
    EXPECT_LE(cbc->objective_ms - exact->objective_ms, cbc->gap * cbc->objective_ms + 1e-6) << "trial " << trial;
    if (cbc->status == "optimal") {
      EXPECT_NEAR(cbc->objective_ms, exact->objective_ms, 1e-6);
      ++optimal;
    }
  }
  EXPECT_GT(optimal, 40);  // the unit's rounding rarely matters
}

TEST(Ilp, InfeasibleBudgetStatesSmallestFeasibleBudget) {
  IlpProblem p;
  p.kernels = {{{1.0, 300}, {2.0, 200}}, {{1.0, 500}, {3.0, 150}}, {{1.0, 0}}};
  p.budget_bytes = 349;  // smallest: 200 + 150 + 0 = 350
  EXPECT_EQ(smallest_feasible_budget(p), 350u);
  for (bool exhaustive : {false, true}) {
    auto s = exhaustive ? solve_ilp_exhaustive(p) : solve_ilp(p);
    ASSERT_FALSE(s.has_value());
    EXPECT_EQ(s.status().code(), StatusCode::kInfeasible);
    EXPECT_NE(s.status().message().find("smallest feasible budget is 350 bytes"), std::string::npos)
        << s.status().message();
  }
  p.budget_bytes = 350;
  auto s = solve_ilp(p);
  ASSERT_TRUE(s.has_value()) << s.status().to_string();
  EXPECT_EQ(s->choice, (std::vector<int>{1, 1, 0}));
  // With sets, the smallest budget is the max over sets.
  p.concurrent_sets = {{0, 2}, {1}};
  EXPECT_EQ(smallest_feasible_budget(p), 200u);
}

TEST(Ilp, ConcurrentSetsLetNonOverlappingKernelsShareBytes) {
  // Two kernels that each want 100 B for their fast option; budget 100.
  IlpProblem p;
  p.budget_bytes = 100;
  p.kernels = {{{10.0, 0}, {1.0, 100}}, {{10.0, 0}, {1.0, 100}}};
  auto global = solve_ilp(p);  // one global sum: only one can be fast
  ASSERT_TRUE(global.has_value());
  EXPECT_DOUBLE_EQ(global->objective_ms, 11.0);
  p.concurrent_sets = {{0}, {1}};  // never overlap: both fit
  for (bool exhaustive : {false, true}) {
    auto shared = exhaustive ? solve_ilp_exhaustive(p) : solve_ilp(p);
    ASSERT_TRUE(shared.has_value()) << shared.status().to_string();
    EXPECT_DOUBLE_EQ(shared->objective_ms, 2.0);
    EXPECT_EQ(shared->choice, (std::vector<int>{1, 1}));
  }
  // A kernel in no set is still bounded by the budget on its own.
  p.kernels.push_back({{5.0, 0}, {0.5, 101}});
  auto uncovered = solve_ilp(p);
  ASSERT_TRUE(uncovered.has_value());
  EXPECT_EQ(uncovered->choice[2], 0);
}

TEST(Ilp, InvalidInputsAreErrors) {
  IlpProblem empty_options;
  empty_options.kernels = {{}};
  EXPECT_EQ(solve_ilp(empty_options).status().code(), StatusCode::kInvalidArgument);
  IlpProblem bad_set;
  bad_set.kernels = {{{1.0, 0}}};
  bad_set.concurrent_sets = {{0, 3}};
  EXPECT_EQ(solve_ilp(bad_set).status().code(), StatusCode::kInvalidArgument);
  IlpProblem bad_time;
  bad_time.kernels = {{{-1.0, 0}}};
  EXPECT_EQ(solve_ilp_exhaustive(bad_time).status().code(), StatusCode::kInvalidArgument);
  IlpProblem none;  // no kernels: trivially optimal
  auto s = solve_ilp(none);
  ASSERT_TRUE(s.has_value());
  EXPECT_TRUE(s->choice.empty());
}

TEST(Ilp, LargeWorkspacesStayWithinBudgetExactly) {
  // Byte-exact budgets at GiB scale (Note [workspace units in the model]).
  IlpProblem p;
  const size_t gib = size_t{1} << 30;
  p.kernels = {{{5.0, 0}, {1.0, gib + 1}}, {{5.0, 0}, {1.0, gib}}};
  p.budget_bytes = 2 * gib;  // both fast options need 2 GiB + 1 byte
  auto s = solve_ilp(p);
  ASSERT_TRUE(s.has_value()) << s.status().to_string();
  EXPECT_DOUBLE_EQ(s->objective_ms, 6.0);
  EXPECT_TRUE(satisfies_constraints(p, s->choice));
}

}  // namespace
}  // namespace ucudnn::optimizer
