// The naive reference of any op in runtime/ir/op_list.h — the oracle the op
// table (tests/op_table_test.cc) compares every backend with: the
// compute-heavy ops from conv_reference.h, the rest from
// elementwise_reference.h.
#pragma once

#include <vector>

#include "runtime/core/status.h"
#include "runtime/core/tensor.h"
#include "runtime/ir/graph.h"

namespace ucudnn::reference {

// The outputs of `node` for `inputs` (nullptr = absent optional input); node.attrs must
// hold the spec defaults. Unsupported for an op without a reference.
Expected<std::vector<Tensor>> reference_outputs(const ir::Node& node, const std::vector<const Tensor*>& inputs);

}  // namespace ucudnn::reference
