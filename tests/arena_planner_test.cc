// Tests of the greedy-by-size arena planner: no two buffers alive at the same
// step overlap, offsets are aligned, reuse happens, and a golden layout.
#include <gtest/gtest.h>

#include <random>

#include "optimizer/arena_planner.h"

namespace ucudnn::optimizer {
namespace {

bool overlaps_in_time(const BufferRequest& a, const BufferRequest& b) {
  return a.first_step <= b.last_step && b.first_step <= a.last_step;
}

void expect_valid(const std::vector<BufferRequest>& requests, const ArenaLayout& layout) {
  ASSERT_EQ(layout.offsets.size(), requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    EXPECT_EQ(layout.offsets[i] % 64, 0u);
    EXPECT_LE(layout.offsets[i] + requests[i].bytes, layout.arena_bytes);
    for (size_t j = i + 1; j < requests.size(); ++j) {
      if (!overlaps_in_time(requests[i], requests[j])) continue;
      const bool disjoint = layout.offsets[i] + requests[i].bytes <= layout.offsets[j] ||
                            layout.offsets[j] + requests[j].bytes <= layout.offsets[i];
      EXPECT_TRUE(disjoint) << "buffers " << i << " and " << j << " overlap";
    }
  }
}

TEST(ArenaPlanner, ChainReusesMemory) {
  // a -> b -> c -> d: each buffer lives two steps; at most two are alive at once.
  std::vector<BufferRequest> requests = {{1000, 0, 1}, {1000, 1, 2}, {1000, 2, 3}, {1000, 3, 4}};
  ArenaLayout layout = plan_arena(requests);
  expect_valid(requests, layout);
  EXPECT_EQ(layout.unplanned_bytes, 4000u);
  EXPECT_EQ(layout.arena_bytes, 2 * 1024u);  // two slots of 1000 rounded to 1024
  EXPECT_EQ(layout.offsets[0], layout.offsets[2]);
  EXPECT_EQ(layout.offsets[1], layout.offsets[3]);
}

TEST(ArenaPlanner, GoldenLayout) {
  // Largest first: c (4096) at 0; a (1024, overlaps c) at 4096; b (2048, alive
  // with a only) fits at 0 since c is not alive at steps 0..1.
  std::vector<BufferRequest> requests = {{1024, 0, 3}, {2048, 0, 1}, {4096, 2, 4}};
  ArenaLayout layout = plan_arena(requests);
  expect_valid(requests, layout);
  EXPECT_EQ(layout.offsets[2], 0u);
  EXPECT_EQ(layout.offsets[0], 4096u);
  EXPECT_EQ(layout.offsets[1], 0u);
  EXPECT_EQ(layout.arena_bytes, 5120u);
}

TEST(ArenaPlanner, RandomLifetimesNeverOverlap) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<BufferRequest> requests;
    for (int i = 0; i < 40; ++i) {
      const int32_t first = static_cast<int32_t>(rng() % 30);
      requests.push_back({1 + rng() % 5000, first, first + static_cast<int32_t>(rng() % 6)});
    }
    ArenaLayout layout = plan_arena(requests);
    expect_valid(requests, layout);
    EXPECT_LE(layout.arena_bytes, layout.unplanned_bytes + 64 * requests.size());
  }
}

// Before: the second buffer's end (2^63 + 2^63) wrapped to 0, and the arena claimed 2^63 bytes for both.
TEST(ArenaPlanner, ALayoutPastSizeTSaturatesInsteadOfWrapping) {
  const size_t half = size_t{1} << 63;
  std::vector<BufferRequest> requests = {{half, 0, 1}, {half, 0, 1}, {SIZE_MAX, 2, 2}};
  ArenaLayout layout = plan_arena(requests);
  EXPECT_EQ(layout.arena_bytes, SIZE_MAX);
  EXPECT_EQ(layout.unplanned_bytes, SIZE_MAX);
}

}  // namespace
}  // namespace ucudnn::optimizer
