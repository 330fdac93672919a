// The checks of an untrusted plan (see plan_checks.h).
#include "runtime/plan/plan_checks.h"

#include <algorithm>

#include "runtime/core/bytes.h"
#include "runtime/core/tensor.h"
#include "runtime/ir/fusion.h"
#include "runtime/plan/liveness.h"
#include "runtime/plan/side_stream.h"
#include "runtime/plan/views.h"

namespace ucudnn::runtime {

namespace {

std::string bytes_text(size_t bytes) { return std::to_string(bytes) + " bytes"; }

// Step `s` of the plan: its node, its workspace slice in the pool, its micro-batches and algorithms.
Status check_step(const ir::Graph& graph, const Plan& plan, size_t s) {
  const PlanStep& step = plan.steps[s];
  if (step.node != static_cast<ir::NodeId>(s))
    return invalid_argument("the plan's step " + std::to_string(s) + " runs node " + std::to_string(step.node) +
                            "; steps must run the model's nodes in order");
  const ir::Node& node = graph.nodes[s];
  size_t end = 0;
  // In the arena (Note [workspace in the arena]) check_activation_memory has placed it already.
  if (!plan.workspace_in_arena &&
      (!checked_add(step.workspace_offset, step.workspace_bytes, &end) || end > plan.workspace_pool_bytes))
    return invalid_argument(node.describe() + ": the plan's workspace slice (offset " +
                            std::to_string(step.workspace_offset) + ", " + bytes_text(step.workspace_bytes) +
                            ") lies outside the pool of " + bytes_text(plan.workspace_pool_bytes));
  if (step.micro_batches.empty()) return Status::ok();
  if (!ir::is_convolution(node))
    return invalid_argument(node.describe() + ": only convolutions can be divided into micro-batches");
  const Shape& x = graph.value(node.inputs[0]).shape;
  const int64_t batch = x.empty() ? 0 : x[0];
  // Micro-batch i covers the samples after those of 0..i-1 (Executor::prepare_steps): positive sizes summing
  // to the batch leave no gap and no overlap.
  if (!micro_batches_cover(step.micro_batches, batch)) {
    std::string sizes;
    for (const MicroBatch& m : step.micro_batches) sizes += (sizes.empty() ? "" : ", ") + std::to_string(m.size);
    return invalid_argument(node.describe() + ": the plan's micro-batch sizes (" + sizes +
                            ") do not sum to the batch " + std::to_string(batch) + " (each must be positive)");
  }
  for (const MicroBatch& m : step.micro_batches)
    if (m.algorithm < -1)  // the backend's prepare checks the upper end of its own ids
      return invalid_argument(node.describe() + ": the plan names algorithm " + std::to_string(m.algorithm) +
                              " for a micro-batch of " + std::to_string(m.size) +
                              "; algorithm ids are >= 0, or -1 for the default");
  return Status::ok();
}

}  // namespace

Status check_plan(const ir::Graph& graph, const Plan& plan, const std::string& device) {
  // Sizes first: everything below computes bytes from the values' shapes with plain arithmetic.
  UCUDNN_RETURN_IF_ERROR(ir::check_value_sizes(graph).with_context("model '" + graph.name + "'"));
  if (plan.device != device)
    return invalid_argument("the plan was made for device '" + plan.device + "', this session runs on '" +
                            device + "'");
  if (plan.value_offsets.size() != graph.values.size() || plan.steps.size() != graph.nodes.size())
    return invalid_argument("the plan does not match the model (" + std::to_string(plan.steps.size()) +
                            " steps for " + std::to_string(graph.nodes.size()) + " nodes, " +
                            std::to_string(plan.value_offsets.size()) + " value offsets for " +
                            std::to_string(graph.values.size()) + " values)");
  // Value offsets are int64: an arena larger than they reach cannot be used (nor allocated).
  if (plan.arena_bytes > kMaxTensorBytes)
    return invalid_argument("the plan's activation arena of " + bytes_text(plan.arena_bytes) +
                            " is larger than arena offsets reach (" + bytes_text(kMaxTensorBytes) +
                            "); make the plan again with a smaller batch");
  UCUDNN_RETURN_IF_ERROR(check_activation_memory(graph, plan));
  for (size_t s = 0; s < plan.steps.size(); ++s) UCUDNN_RETURN_IF_ERROR(check_step(graph, plan, s));
  return check_side_streams(graph, plan);
}

Status check_activation_memory(const ir::Graph& graph, const Plan& plan) {
  struct Placed {
    ir::ValueId id;  // kNoValue: the workspace of step `step`
    size_t begin, end;
    Lifetime life;
    int32_t step = -1;
  };
  auto name = [&](const Placed& p) {
    return p.id != ir::kNoValue ? "value '" + graph.value(p.id).name + "'"
                                : "the workspace of step " + std::to_string(p.step) + " (" +
                                      graph.nodes[p.step].describe() + ")";
  };
  const std::vector<Lifetime> life = value_lifetimes(graph, plan);
  std::vector<Placed> placed;
  for (size_t id = 0; id < graph.values.size(); ++id) {
    const ir::Value& v = graph.values[id];
    const int64_t offset = plan.value_offsets[id];
    if (v.constant) continue;
    if (offset == -1) {
      if (life[id].first >= 0)
        return invalid_argument("the plan gives value '" + v.name + "', which the model uses, no place in the arena");
      continue;
    }
    size_t end = 0;
    if (offset < 0 || !checked_add(static_cast<size_t>(offset), value_bytes(v), &end) || end > plan.arena_bytes)
      return invalid_argument("the plan places value '" + v.name + "' at arena offset " + std::to_string(offset) +
                              ", outside the arena of " + std::to_string(plan.arena_bytes) + " bytes");
    // A misaligned element faults on the GPU (and is undefined behaviour in C++).
    if (dtype_size(v.dtype) > 1 && static_cast<size_t>(offset) % dtype_size(v.dtype) != 0)
      return invalid_argument("the plan places value '" + v.name + "' at arena offset " + std::to_string(offset) +
                              ", not a multiple of its element size " + std::to_string(dtype_size(v.dtype)));
    if (end > static_cast<size_t>(offset) && life[id].first >= 0)
      placed.push_back({static_cast<ir::ValueId>(id), static_cast<size_t>(offset), end, life[id]});
  }
  if (plan.workspace_in_arena) {  // Note [workspace in the arena]
    for (int32_t step = 0; step < static_cast<int32_t>(plan.steps.size()) &&
                           static_cast<size_t>(step) < graph.nodes.size(); ++step) {
      const PlanStep& s = plan.steps[step];
      if (s.workspace_bytes == 0 && s.workspace_offset > plan.arena_bytes)
        return invalid_argument("the plan places the empty workspace of step " + std::to_string(step) + " (" +
                                graph.nodes[step].describe() + ") at arena offset " +
                                std::to_string(s.workspace_offset) + ", outside the arena of " +
                                std::to_string(plan.arena_bytes) + " bytes");
      if (s.workspace_bytes == 0) continue;
      size_t end = 0;
      if (!checked_add(s.workspace_offset, s.workspace_bytes, &end) || end > plan.arena_bytes)
        return invalid_argument("the plan places the workspace of step " + std::to_string(step) + " (" +
                                graph.nodes[step].describe() + ", " + std::to_string(s.workspace_bytes) +
                                " bytes at arena offset " + std::to_string(s.workspace_offset) +
                                ") outside the arena of " + std::to_string(plan.arena_bytes) + " bytes");
      if (s.workspace_offset % kBufferAlignment != 0)
        return invalid_argument("the plan places the workspace of step " + std::to_string(step) + " (" +
                                graph.nodes[step].describe() + ") at arena offset " +
                                std::to_string(s.workspace_offset) + ", not a multiple of " +
                                std::to_string(kBufferAlignment));
      placed.push_back({ir::kNoValue, s.workspace_offset, end, workspace_lifetime(graph, plan, step), step});
    }
  }
  std::sort(placed.begin(), placed.end(), [](const Placed& a, const Placed& b) { return a.begin < b.begin; });
  // Whether one of the two is the output of the step that last reads the other, written over it.
  const std::vector<bool> side = side_stream_values(graph, plan);
  const std::vector<ir::ValueId> root = view_roots(graph, plan);
  auto writes_over = [&](const Placed& a, const Placed& b) {
    if (a.id == ir::kNoValue || b.id == ir::kNoValue) return false;
    if (root[a.id] == root[b.id]) return true;  // a view and what it views (Note [views])
    return may_write_over(graph, plan, life, side, root, b.life.first, a.id, b.id) ||
           may_write_over(graph, plan, life, side, root, a.life.first, b.id, a.id);
  };
  for (size_t i = 0; i < placed.size(); ++i)
    for (size_t j = i + 1; j < placed.size() && placed[j].begin < placed[i].end; ++j) {
      const Placed& a = placed[i];
      const Placed& b = placed[j];
      if (a.life.last < b.life.first || b.life.last < a.life.first) continue;  // never alive together
      if (a.begin == b.begin && a.end == b.end && writes_over(a, b)) continue;  // Note [in-place pointwise]
      return invalid_argument("the plan gives " + name(a) + " and " + name(b) +
                              " overlapping arena bytes while both are alive (steps " +
                              std::to_string(std::max(a.life.first, b.life.first)) + " to " +
                              std::to_string(std::min(a.life.last, b.life.last)) + ")");
    }
  return Status::ok();
}

}  // namespace ucudnn::runtime
