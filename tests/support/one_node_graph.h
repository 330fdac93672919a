// One-node graphs for op tests: an op, its attributes and its inputs become an
// ir::Graph as the importer would leave it — the op's spec defaults filled in,
// the output dtypes and shapes from the op's shape rule (runtime/ops) — with
// seeded values for every input. Inputs marked constant become constants of
// the graph (weights, shape inputs: what the shape rule and the backends see
// as known at load); the others are runtime inputs, fed to each run. A
// ConvTranspose is lowered as the importer lowers it (onnx_import/lowering/conv_transpose.h):
// the graph holds ConvGradData and the bias's nodes; node() is the ConvTranspose.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "runtime/core/status.h"
#include "runtime/core/tensor.h"
#include "runtime/ir/graph.h"

namespace ucudnn_test {

using AttrList = std::vector<std::pair<std::string, ucudnn::ir::AttrValue>>;

// One input of a node.
struct InputSpec {
  ucudnn::DType dtype = ucudnn::DType::kUndefined;  // kUndefined: an absent optional input
  ucudnn::Shape shape;
  std::vector<double> values;  // given values (repeated when shorter); empty: random
  bool constant = false;       // a constant of the graph rather than a runtime input
  double low = -1.0, high = 1.0;  // range of random float values
};

// A runtime float32 input with random values in [low, high).
InputSpec input(ucudnn::Shape shape, double low = -1.0, double high = 1.0);
// A runtime float32 input holding `values`.
InputSpec input_values(ucudnn::Shape shape, std::vector<double> values);
// A constant float32 input (a weight) with random values in [low, high).
InputSpec weight(ucudnn::Shape shape, double low = -1.0, double high = 1.0);
// A constant float32 input holding `values`.
InputSpec weight_values(ucudnn::Shape shape, std::vector<double> values);
// A runtime input of any dtype: random values (see make_random_tensor), or `values`.
InputSpec typed_input(ucudnn::DType dtype, ucudnn::Shape shape, std::vector<double> values = {});
// A constant input of any dtype holding `values`.
InputSpec typed_constant(ucudnn::DType dtype, ucudnn::Shape shape, std::vector<double> values);
// A constant int64 vector (axes, starts, pads, shapes, split sizes, ...).
InputSpec ints(std::vector<double> values);
// An absent optional input.
InputSpec absent();

// A node as the importer builds it: the op's spec defaults, then `attrs`; input i is
// value i and output j value num_inputs + j (ids only: no graph).
ucudnn::ir::Node make_node(const std::string& name, ucudnn::OpKind op, const AttrList& attrs, size_t num_inputs,
                           int num_outputs = 1, int opset = 17);

struct OneNodeGraph {
  ucudnn::ir::Graph graph;            // inputs are values "in<i>", outputs "out<j>"
  std::vector<ucudnn::Tensor> feeds;  // the runtime inputs' values, in the order of graph.inputs

  ucudnn::ir::Node op_node;           // the node as built; graph holds what the importer makes of it

  const ucudnn::ir::Node& node() const { return op_node; }
  // Every input of the node (a feed or the graph's constant; nullptr when absent): what a
  // reference computes from. Valid while this graph lives unchanged.
  std::vector<const ucudnn::Tensor*> node_inputs() const;
};

// The graph of one node `name` running `op` (opset `opset`) on `inputs` with `attrs`
// and `num_outputs` outputs, values drawn with `seed`. The shape rule's error (code
// and message naming the node) when it rejects the node.
ucudnn::Expected<OneNodeGraph> make_one_node_graph(const std::string& name, ucudnn::OpKind op, int opset,
                                                   const std::vector<InputSpec>& inputs, const AttrList& attrs,
                                                   int num_outputs, uint32_t seed);

}  // namespace ucudnn_test
