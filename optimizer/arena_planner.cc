// Greedy-by-size arena planner (see arena_planner.h).
#include "optimizer/arena_planner.h"

#include <algorithm>
#include <numeric>

#include "runtime/core/bytes.h"

namespace ucudnn::optimizer {

ArenaLayout plan_arena(const std::vector<BufferRequest>& requests, size_t alignment) {
  ArenaLayout layout;
  layout.offsets.assign(requests.size(), 0);
  std::vector<size_t> order(requests.size());
  std::iota(order.begin(), order.end(), 0);
  // Largest first; ties by earlier first use, then index, so the result is deterministic.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (requests[a].bytes != requests[b].bytes) return requests[a].bytes > requests[b].bytes;
    return requests[a].first_step < requests[b].first_step;
  });

  struct Placed {
    size_t offset, end;
    int32_t first, last;
  };
  std::vector<Placed> placed;
  for (size_t index : order) {
    const BufferRequest& r = requests[index];
    layout.unplanned_bytes = saturating_add(layout.unplanned_bytes, r.bytes);
    size_t size = 0;
    if (!checked_align_up(std::max<size_t>(r.bytes, 1), alignment, &size)) size = SIZE_MAX;
    // Intervals of the arena occupied by buffers alive at the same time, by offset.
    std::vector<std::pair<size_t, size_t>> busy;
    for (const Placed& p : placed)
      if (p.first <= r.last_step && r.first_step <= p.last) busy.push_back({p.offset, p.end});
    std::sort(busy.begin(), busy.end());
    // Best fit: the smallest gap that holds the buffer; else after the last busy interval.
    size_t best_offset = 0, best_gap = SIZE_MAX, cursor = 0;
    bool found = false;
    for (const auto& [begin, end] : busy) {
      if (begin >= saturating_add(cursor, size) && begin - cursor < best_gap) {
        best_gap = begin - cursor;
        best_offset = cursor;
        found = true;
      }
      cursor = std::max(cursor, end);
    }
    if (!found) best_offset = cursor;
    layout.offsets[index] = best_offset;
    const size_t end = saturating_add(best_offset, size);
    placed.push_back({best_offset, end, r.first_step, r.last_step});
    layout.arena_bytes = std::max(layout.arena_bytes, end);
  }
  return layout;
}

}  // namespace ucudnn::optimizer
