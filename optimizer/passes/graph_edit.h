// Small graph-editing helpers the passes share: who reads a value, and removing
// nodes while keeping producers and topological order consistent.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/ir/graph.h"

namespace ucudnn::optimizer {

// Number of node inputs reading each value, plus one per graph output use.
std::vector<int> count_uses(const ir::Graph& graph);
// Whether `id` is one of the graph's outputs.
bool is_graph_output(const ir::Graph& graph, ir::ValueId id);
// Makes every reader of `from` (node inputs) read `to` instead.
void replace_uses(ir::Graph& graph, ir::ValueId from, ir::ValueId to);
// Removes the marked nodes, renumbers producers, then drops unused values.
void remove_nodes(ir::Graph& graph, const std::vector<bool>& remove);

// The attributes of a FusedPointwise node (Note [pointwise programs], runtime/ir/pointwise_program.h).
struct PointwiseAttrs {
  std::vector<int64_t> program;  // kInstructionWidth values per instruction
  std::vector<float> constants;
  int64_t concat_axis = -1;
  int64_t concat_count = 0;      // leading inputs that are concatenated into leaf 0
  std::string pattern;           // "SiLU", "Bias+Add", ...
};
// A FusedPointwise node that takes the place of `replaced` (its name, opset and outputs), reading `inputs`.
ir::Node make_fused_pointwise(const ir::Node& replaced, std::vector<ir::ValueId> inputs, PointwiseAttrs attrs);

}  // namespace ucudnn::optimizer
