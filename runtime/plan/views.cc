// Views: which nodes only reshape, and which values share their input's bytes (see views.h).
#include "runtime/plan/views.h"

#include <algorithm>
#include <numeric>

#include "runtime/plan/liveness.h"
#include "runtime/plan/side_stream.h"

namespace ucudnn::runtime {

bool is_view_node(const ir::Node& node) {
  switch (node.op) {
    case OpKind::kReshape: case OpKind::kFlatten: case OpKind::kSqueeze: case OpKind::kUnsqueeze:
    case OpKind::kIdentity:
      return true;
    default:
      return false;
  }
}

// Note [views]: a Reshape, Flatten, Squeeze, Unsqueeze or Identity writes its input's bytes unchanged,
// so with Plan::zero_copy_views its output is placed on its input (the executor then runs no copy:
// the two pointers are equal). A view and the value it views are one buffer: every member lives
// until the last of them is read (value_lifetimes), so a FusedPointwise writes over such a buffer
// only when no member is read later. Not for constants, values a side-stream step touches, nor the
// graph's inputs and outputs (a bound run, Executor::run_bound, puts those in the caller's buffers).
//
// Per value, the value whose bytes it is (itself when it is no view); chains resolve to the first.
std::vector<ir::ValueId> view_roots(const ir::Graph& graph, const Plan& plan) {
  std::vector<ir::ValueId> root(graph.values.size());
  std::iota(root.begin(), root.end(), 0);
  if (!plan.zero_copy_views) return root;
  const std::vector<bool> side = side_stream_values(graph, plan);
  auto callers = [&](ir::ValueId id) {
    return std::find(graph.inputs.begin(), graph.inputs.end(), id) != graph.inputs.end() ||
           std::find(graph.outputs.begin(), graph.outputs.end(), id) != graph.outputs.end();
  };
  for (const ir::Node& node : graph.nodes) {
    if (!is_view_node(node) || node.inputs.empty() || node.outputs.size() != 1) continue;
    const ir::ValueId in = node.inputs[0], out = node.outputs[0];
    if (in == ir::kNoValue || out == ir::kNoValue) continue;
    const ir::Value& a = graph.value(in);
    const ir::Value& b = graph.value(out);
    if (a.constant || b.constant || side[in] || side[out] || callers(in) || callers(out) || a.dtype != b.dtype ||
        value_bytes(a) != value_bytes(b) || value_bytes(a) == SIZE_MAX)
      continue;
    root[out] = root[in];
  }
  return root;
}

}  // namespace ucudnn::runtime
