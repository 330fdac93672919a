// Einsum (opset 12) of one or two float32 operands, lowered at import (Note [lowered ops], runtime/ops/lowered_ops.h)
// into the ops that compute it: a ReduceSum of labels only one operand has and the output lacks, then for two operands
// a Transpose of each to [batch labels, its own labels, summed labels] (the other's: [batch, summed, own]), Reshapes to
// 3 dims past the batch ones, a MatMul (which broadcasts the batch labels), and a Reshape and Transpose to the output's
// order; for one operand the Transpose alone.
//   "bhid,bhjd->bhij" (attention scores) becomes Transpose(B) · MatMul; "ij->ji" a Transpose; "ii->i"
//   (a diagonal: one label twice in an operand) and three or more operands are Unsupported.
// The equation may use "..." (right-aligned, broadcast like numpy) and the implicit form without "->".
#pragma once

#include "runtime/core/status.h"
#include "runtime/ir/graph.h"

namespace ucudnn {

// Rewrites every Einsum of `graph` (shapes inferred).
Status lower_einsums(ir::Graph& graph);

}  // namespace ucudnn
