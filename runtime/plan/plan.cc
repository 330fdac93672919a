// Plan helpers: the largest step workspace, micro-batch cover, and the graph's fingerprint.
#include "runtime/plan/plan.h"

#include <algorithm>
#include <cstdio>

#include "runtime/core/bytes.h"
#include "runtime/core/fnv1a.h"

namespace ucudnn::runtime {

size_t largest_step_workspace(const Plan& plan) {
  size_t largest = 0;
  for (const PlanStep& step : plan.steps) largest = std::max(largest, step.workspace_bytes);
  return largest;
}

bool micro_batches_cover(const std::vector<MicroBatch>& micro_batches, int64_t batch) {
  int64_t sum = 0;
  for (const MicroBatch& m : micro_batches)
    if (m.size <= 0 || !checked_add(sum, m.size, &sum)) return false;  // a wrapped sum could equal the batch
  return sum == batch;
}

std::string graph_fingerprint(const ir::Graph& graph) {
  // FNV-1a over a canonical text of the graph, each piece closed by 0xff (Note [legacy fnv1a basis]).
  uint64_t hash = kLegacyFnv1aBasis;
  auto mix = [&hash](const std::string& text) {
    hash = fnv1a_step(fnv1a(text, hash), 0xff);
  };
  for (const ir::Node& node : graph.nodes) {
    mix(op_name(node.op));
    for (const auto& [name, value] : node.attrs.all()) mix(name);
    for (ir::ValueId id : node.inputs) mix(id == ir::kNoValue ? "-" : shape_to_string(graph.value(id).shape));
    for (ir::ValueId id : node.outputs) mix(shape_to_string(graph.value(id).shape) + dtype_name(graph.value(id).dtype));
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
  return text;
}

}  // namespace ucudnn::runtime
