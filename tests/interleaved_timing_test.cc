// fastest_in_turns (Note [interleaved timing], optimizer/bench/interleaved_timing.h): the rounds it runs,
// the fastest run it keeps, the runs it drops.
#include "optimizer/bench/interleaved_timing.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace ucudnn::optimizer {
namespace {

void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

TEST(InterleavedTiming, CheapRunsGetUpToMaxRepeatsRoundsInTurns) {
  std::vector<int> order;
  const std::vector<std::function<bool()>> runs = {[&] { order.push_back(0); return true; },
                                                    [&] { order.push_back(1); return true; }};
  const auto times = fastest_in_turns(runs, {.warmup = 1, .repeats = 3, .max_repeats = 6, .round_budget_ms = 1e9});
  ASSERT_EQ(times.size(), 2u);
  EXPECT_TRUE(times[0].has_value());
  EXPECT_TRUE(times[1].has_value());
  ASSERT_EQ(order.size(), 14u);  // 1 warm-up + 6 timed rounds, two runs each
  for (size_t i = 0; i < order.size(); ++i) EXPECT_EQ(order[i], static_cast<int>(i % 2)) << i;
}

TEST(InterleavedTiming, RoundsPastRepeatsStopAtTheBudget) {
  int calls = 0;
  const std::vector<std::function<bool()>> runs = {[&] { ++calls; sleep_ms(5); return true; }};
  const auto times = fastest_in_turns(runs, {.warmup = 1, .repeats = 2, .max_repeats = 10, .round_budget_ms = 1});
  EXPECT_EQ(calls, 3);  // the budget is spent at the warm-up: only the `repeats` timed rounds follow
  ASSERT_TRUE(times[0].has_value());
  EXPECT_GE(*times[0], 5.0);
}

TEST(InterleavedTiming, KeepsTheFastestTimedRun) {
  int calls = 0;
  // The warm-up round is the slowest and is not timed; the first timed run is slow (a burst of load).
  const std::vector<std::function<bool()>> runs = {[&] { sleep_ms(++calls <= 2 ? 200 : 2); return true; }};
  const auto times = fastest_in_turns(runs, {.warmup = 1, .repeats = 3, .max_repeats = 3, .round_budget_ms = 0});
  EXPECT_EQ(calls, 4);
  ASSERT_TRUE(times[0].has_value());
  EXPECT_GE(*times[0], 2.0);
  EXPECT_LT(*times[0], 200.0);
}

TEST(InterleavedTiming, AFailedRunIsDroppedAndAnEmptyOneNeverRuns) {
  int failing_calls = 0, good_calls = 0;
  const std::vector<std::function<bool()>> runs = {
      [&] { return ++failing_calls < 3; },  // fails in the second timed round
      nullptr,
      [&] { ++good_calls; return true; }};
  const auto times = fastest_in_turns(runs, {.warmup = 1, .repeats = 4, .max_repeats = 4, .round_budget_ms = 0});
  EXPECT_FALSE(times[0].has_value());
  EXPECT_EQ(failing_calls, 3);
  EXPECT_FALSE(times[1].has_value());
  EXPECT_TRUE(times[2].has_value());
  EXPECT_EQ(good_calls, 5);
}

}  // namespace
}  // namespace ucudnn::optimizer
