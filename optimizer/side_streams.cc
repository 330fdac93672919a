// Making a plan's side streams (see side_streams.h; Note [side stream] in runtime/plan/side_stream.h).
#include "optimizer/side_streams.h"

#include <algorithm>

#include "runtime/plan/side_stream.h"

namespace ucudnn::optimizer {

using runtime::kSideStream;
using runtime::neighbours_on_main;
using runtime::Plan;
using runtime::PlanStep;
using runtime::side_window;
using runtime::SideWindow;
using runtime::slices_overlap;

namespace {

constexpr size_t kSliceAlignment = 256;  // a moved slice starts as aligned as cudaMalloc's memory

int main_convs_in_window(const ir::Graph& graph, ir::NodeId n, const std::vector<bool>& side) {
  const SideWindow w = side_window(graph, n);
  int count = 0;
  for (int32_t m = w.fork + 1; m < w.join; ++m)
    if (m != n && graph.nodes[m].op == OpKind::kConv && !side[m]) ++count;
  return count;
}

}  // namespace

std::vector<ir::NodeId> side_stream_candidates(const ir::Graph& graph) {
  const size_t n_nodes = graph.nodes.size();
  std::vector<bool> side(n_nodes, false);
  std::vector<ir::NodeId> convs;
  std::vector<int> width(n_nodes, 0);
  for (size_t n = 0; n < n_nodes; ++n) {
    if (graph.nodes[n].op != OpKind::kConv) continue;
    convs.push_back(static_cast<ir::NodeId>(n));
    width[n] = main_convs_in_window(graph, static_cast<ir::NodeId>(n), side);
  }
  // Widest first; on a tie the later node (a ResNet-18 block is conv1, downsample, conv2+z: both windows
  // hold one Conv, and the branch the exporter wrote last, the downsample, goes to the side).
  std::sort(convs.begin(), convs.end(),
            [&](ir::NodeId a, ir::NodeId b) { return width[a] != width[b] ? width[a] > width[b] : a > b; });
  for (ir::NodeId n : convs)
    if (main_convs_in_window(graph, n, side) > 0 && neighbours_on_main(graph, n, side)) side[n] = true;
  // A later choice can leave an earlier one with only side convolutions in its
  // window: nothing to overlap, so it goes back to the main stream.
  for (bool changed = true; changed;) {
    changed = false;
    for (ir::NodeId n : convs)
      if (side[n] && main_convs_in_window(graph, n, side) == 0) side[n] = false, changed = true;
  }
  std::vector<ir::NodeId> chosen;
  for (size_t n = 0; n < n_nodes; ++n)
    if (side[n]) chosen.push_back(static_cast<ir::NodeId>(n));
  return chosen;
}

int assign_side_streams(const ir::Graph& graph, const std::vector<ir::NodeId>& candidates, size_t pool_limit,
                        Plan* plan) {
  int placed = 0;
  for (ir::NodeId n : candidates) {
    PlanStep& step = plan->steps[n];
    const SideWindow w = side_window(graph, n);
    size_t top = 0;  // end of the highest slice in the window
    bool overlaps = false;
    for (int32_t m = w.fork + 1; m < w.join; ++m) {
      // Side steps queue one after another, so only main steps can run beside this one.
      if (m == n || plan->steps[m].stream == kSideStream || plan->steps[m].workspace_bytes == 0) continue;
      top = std::max(top, plan->steps[m].workspace_offset + plan->steps[m].workspace_bytes);
      overlaps = overlaps || slices_overlap(step, plan->steps[m]);
    }
    if (overlaps) {
      top = (top + kSliceAlignment - 1) / kSliceAlignment * kSliceAlignment;
      if (top + step.workspace_bytes > pool_limit) continue;  // no room beside the window: stays on the main stream
      step.workspace_offset = top;
    }
    step.stream = kSideStream;
    plan->workspace_pool_bytes = std::max(plan->workspace_pool_bytes, step.workspace_offset + step.workspace_bytes);
    ++placed;
  }
  return placed;
}

}  // namespace ucudnn::optimizer
