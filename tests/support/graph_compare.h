// Structural comparison of two ir::Graphs for pass tests (TVM's style: build
// the expected graph by hand, compare it with what a pass made of the input).
//
// Graphs are compared up to value ids and internal value/node names: both are
// walked in topological (node list) order, node i against node i, and a value
// is identified by where it comes from — graph input i, output slot s of node n,
// a constant with these contents (float32 within a tolerance: folded weights
// are recomputed by the test), or absent (an omitted optional input). Per node
// the op, every attribute, the inputs (by that identity) and each output's dtype
// and shape must match; then the graph inputs (dtype, shape, name) and outputs.
// Node order is part of the structure: it is the execution order plans use.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "runtime/ir/graph.h"

namespace ucudnn_test {

struct GraphCompareOptions {
  // |expected - actual| <= absolute + relative * |expected|, per float32 constant element.
  float relative_tolerance = 1e-5f;
  float absolute_tolerance = 1e-6f;
  // Whether graph inputs and outputs must keep their names (the model's interface).
  bool compare_interface_names = true;
};

// One line per node: "n2 = Conv(input 0 'x', const 'w' float32[8, 4, 3, 3], n1) [group=1] -> float32[2, 8, 4, 4]".
std::string describe_graph(const ucudnn::ir::Graph& graph);

// "" when `actual` has the structure of `expected`; else what differs (the first
// differences, one a line) followed by both graphs as describe_graph writes them.
std::string graph_difference(const ucudnn::ir::Graph& expected, const ucudnn::ir::Graph& actual,
                             const GraphCompareOptions& options = {});

// graph_difference as a GoogleTest assertion: EXPECT_TRUE(same_graph(expected, actual)).
testing::AssertionResult same_graph(const ucudnn::ir::Graph& expected, const ucudnn::ir::Graph& actual,
                                    const GraphCompareOptions& options = {});

}  // namespace ucudnn_test
