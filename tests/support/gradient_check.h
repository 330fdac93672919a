// Gradient checks: an op's gradient rule (OpDescriptor::gradient) against central finite
// differences of its forward computation.
//
// The node becomes a one-node graph (tests/support/one_node_graph.h) whose float32 inputs —
// constants included, which turn into runtime inputs as parameters do in training — are the
// values differentiated. The loss is L = Σ_j Σ out_j · R_j with R_j a seeded random tensor per
// seeded output, so the gradient flowing into output j is R_j. training::append_gradients
// builds the backward nodes; the graph runs on the CPU backend. The finite differences perturb
// one element at a time and evaluate the forward op with its naive reference
// (tests/reference/op_reference.h, double accumulation), differencing the outputs element by
// element before weighting them, so float rounding of the outputs stays small.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tests/support/one_node_graph.h"
#include "tests/support/tensor_checks.h"

namespace ucudnn_test {

struct GradientCheck {
  std::string name;  // for messages
  ucudnn::OpKind op;
  int opset = 17;
  std::vector<InputSpec> inputs;
  AttrList attrs = {};
  int outputs = 1;
  // Outputs the loss reads (their gradient is seeded); empty = every float32 output.
  std::vector<int> seeded_outputs = {};
  // Inputs differentiated; empty = every float32 input.
  std::vector<int> wrt = {};
  double step = 1e-3;                   // finite-difference step h
  Tolerance tolerance = {1e-3, 1e-2};   // analytic vs numeric
  int max_elements = 48;                // per input, checked elements (evenly spread) at most
  uint32_t seed = 7;
};

// Adds test failures (naming the case, input and element) where the rule's gradient and the
// finite differences disagree, or when building or running the gradient fails.
void check_gradients(const GradientCheck& check);

}  // namespace ucudnn_test
