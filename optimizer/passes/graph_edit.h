// Small graph-editing helpers the passes share: who reads a value, and removing
// nodes while keeping producers and topological order consistent.
#pragma once

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

}  // namespace ucudnn::optimizer
