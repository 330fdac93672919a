// The op table's cases (tests/op_cases.cc, op_cases_elementwise.cc), each written once and run on every
// backend by tests/op_table_test.cc: an op, its opset, inputs (shapes, random or
// given values, constant or runtime) and attributes, and for a Conv the
// micro-batches it may run as. Also the cases every backend must reject: shape
// rules that refuse a node, and kernels that refuse their inputs at run time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/core/status.h"
#include "tests/support/one_node_graph.h"

namespace ucudnn_test {

struct OpCase {
  std::string name;  // unique; part of test names
  ucudnn::OpKind op;
  int opset;
  std::vector<InputSpec> inputs;
  AttrList attrs = {};
  int outputs = 1;
  std::optional<ucudnn::Shape> expected_shape = std::nullopt;  // output 0's shape, checked when given
  std::vector<int64_t> micro_batches = {};  // Conv: run as these micro-batches (sizes summing to the batch)
};

struct ErrorCase {
  OpCase op_case;
  ucudnn::StatusCode code;
  std::string mentions = "";  // a phrase the message must contain, besides the node
  bool at_run = false;        // the shape rule accepts it; every backend's kernel must refuse it
};

const std::vector<OpCase>& op_cases();
// The activation, binary, shape, data-movement and reduction part of op_cases() (op_cases_elementwise.cc).
std::vector<OpCase> elementwise_cases();
const std::vector<ErrorCase>& error_cases();
// The training ops' cases, one file per family (tests/op_cases_<family>.cc; docs/TRAINING.md).
std::vector<OpCase> conv_grad_cases();
std::vector<OpCase> conv_transpose_cases();
std::vector<OpCase> activation_grad_cases();
std::vector<OpCase> pooling_grad_cases();
std::vector<OpCase> batch_norm_train_cases();
std::vector<OpCase> softmax_loss_cases();
std::vector<OpCase> optimizer_update_cases();
// FusedPointwise (Note [pointwise programs]) and the programs its shape rule refuses.
std::vector<OpCase> fused_pointwise_cases();
std::vector<ErrorCase> fused_pointwise_error_cases();

}  // namespace ucudnn_test
