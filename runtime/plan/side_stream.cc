// Side-stream windows and their checks (Note [side stream] in side_stream.h).
#include "runtime/plan/side_stream.h"

#include <algorithm>

namespace ucudnn::runtime {

namespace {

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

}  // namespace

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

// Per value, whether a side-stream step reads or writes it (Note [side stream]).
std::vector<bool> side_stream_values(const ir::Graph& graph, const Plan& plan) {
  std::vector<bool> touched(graph.values.size(), false);
  for (size_t step = 0; step < plan.steps.size() && step < graph.nodes.size(); ++step) {
    if (plan.steps[step].stream != kSideStream) continue;
    const ir::Node& node = graph.nodes[step];
    for (const std::vector<ir::ValueId>* ids : {&node.inputs, &node.outputs})
      for (ir::ValueId id : *ids)
        if (id != ir::kNoValue) touched[id] = true;
  }
  return touched;
}

SideWindow side_window(const ir::Graph& graph, ir::NodeId node) {
  SideWindow w;
  for (ir::NodeId p : producers(graph, graph.nodes[node])) w.fork = std::max(w.fork, p);
  const std::vector<ir::NodeId> readers = consumers(graph, node);
  w.join = readers.empty() ? static_cast<int32_t>(graph.nodes.size()) : readers.front();
  return w;
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
