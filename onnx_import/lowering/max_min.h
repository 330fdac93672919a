// Max and Min: the elementwise largest (smallest) of any number of broadcasting inputs, all float32, all int32 or all
// int64 (opset 8's multidirectional broadcasting; older opsets' same-shape inputs are a case of it). The kernels take
// two operands; the importer lowers other counts (Note [lowered ops], runtime/ops/lowered_ops.h): one input into an
// Identity, n > 2 into a chain of pairs ((X0 max X1) max X2) .... A pair's gradient goes to the operand that won (a
// tie: the first).
#pragma once

#include "runtime/core/status.h"
#include "runtime/ir/graph.h"

namespace ucudnn {

// Rewrites every Max and Min of `graph` (shapes inferred) whose input count is not two.
Status lower_maxes_and_mins(ir::Graph& graph);

}  // namespace ucudnn
