// Side-stream analysis (Note [side stream] in side_stream.h).
#include "runtime/executor/side_stream.h"

#include <algorithm>

namespace ucudnn::runtime {

namespace {

constexpr size_t kSliceAlignment = 256;  // a moved slice starts as aligned as cudaMalloc's memory

// Nodes producing a (non-constant) input of `node`.
std::vector<ir::NodeId> producers(const ir::Graph& graph, const ir::Node& node) {
  std::vector<ir::NodeId> out;
  for (ir::ValueId id : node.inputs)
    if (id != ir::kNoValue && graph.value(id).producer >= 0) out.push_back(graph.value(id).producer);
  return out;
}

// Nodes reading an output of node `n`.
std::vector<ir::NodeId> consumers(const ir::Graph& graph, ir::NodeId n) {
  std::vector<ir::NodeId> out;
  const std::vector<ir::ValueId>& outputs = graph.nodes[n].outputs;
  for (size_t m = static_cast<size_t>(n) + 1; m < graph.nodes.size(); ++m)
    for (ir::ValueId id : graph.nodes[m].inputs)
      if (id != ir::kNoValue && std::find(outputs.begin(), outputs.end(), id) != outputs.end()) {
        out.push_back(static_cast<ir::NodeId>(m));
        break;
      }
  return out;
}

bool slices_overlap(const PlanStep& a, const PlanStep& b) {
  if (a.workspace_bytes == 0 || b.workspace_bytes == 0) return false;
  return a.workspace_offset < b.workspace_offset + b.workspace_bytes &&
         b.workspace_offset < a.workspace_offset + a.workspace_bytes;
}

// The side-stream rules that involve the other side steps: no producer and no consumer on the side stream.
bool neighbours_on_main(const ir::Graph& graph, ir::NodeId n, const std::vector<bool>& side) {
  for (ir::NodeId p : producers(graph, graph.nodes[n]))
    if (side[p]) return false;
  for (ir::NodeId c : consumers(graph, n))
    if (side[c]) return false;
  return true;
}

int main_convs_in_window(const ir::Graph& graph, ir::NodeId n, const std::vector<bool>& side) {
  const SideWindow w = side_window(graph, n);
  int count = 0;
  for (int32_t m = w.fork + 1; m < w.join; ++m)
    if (m != n && graph.nodes[m].op == OpKind::kConv && !side[m]) ++count;
  return count;
}

}  // namespace

SideWindow side_window(const ir::Graph& graph, ir::NodeId node) {
  SideWindow w;
  for (ir::NodeId p : producers(graph, graph.nodes[node])) w.fork = std::max(w.fork, p);
  const std::vector<ir::NodeId> readers = consumers(graph, node);
  w.join = readers.empty() ? static_cast<int32_t>(graph.nodes.size()) : readers.front();
  return w;
}

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

Status check_side_streams(const ir::Graph& graph, const Plan& plan) {
  std::vector<bool> side(plan.steps.size(), false);
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const int stream = plan.steps[s].stream;
    if (stream != kMainStream && stream != kSideStream)
      return invalid_argument("plan step " + std::to_string(s) + " names stream " + std::to_string(stream) +
                              "; streams are 0 (main) and 1 (side)");
    if (plan.steps[s].node != static_cast<ir::NodeId>(s) && stream == kSideStream)
      return invalid_argument("plan step " + std::to_string(s) + " is on the side stream but its steps are reordered");
    side[s] = stream == kSideStream;
  }
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    if (!side[s]) continue;
    const auto n = static_cast<ir::NodeId>(s);
    const ir::Node& node = graph.nodes[n];
    if (node.op != OpKind::kConv)
      return invalid_argument(node.describe() + ": only convolutions run on the side stream");
    if (!neighbours_on_main(graph, n, side))
      return invalid_argument(node.describe() + ": a side-stream step may not read from or feed another side-stream step");
    const SideWindow w = side_window(graph, n);
    for (int32_t m = w.fork + 1; m < w.join; ++m)
      if (!side[m] && slices_overlap(plan.steps[s], plan.steps[m]))
        return invalid_argument(node.describe() + ": its workspace slice overlaps that of " +
                                graph.nodes[m].describe() + ", which may run at the same time");
  }
  return Status::ok();
}

}  // namespace ucudnn::runtime
