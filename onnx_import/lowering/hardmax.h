// Hardmax (its descriptor: runtime/ops/reductions.cc, beside Softmax, whose groups it shares), lowered at import
// (Note [lowered ops], runtime/ops/lowered_ops.h): 1 at the first maximum of each group, 0 elsewhere, as
// Cast(Equal(ArgMax(X, axis, keepdims=1), [0, 1, ..., C-1] along the axis), float32). Before opset 13 a
// group is every dim from the axis on (X read as [d0·...·d(axis-1), d(axis)·...]): a Reshape there and back.
#pragma once

#include "runtime/core/status.h"
#include "runtime/ir/graph.h"

namespace ucudnn {

// Rewrites every Hardmax of `graph` (shapes inferred).
Status lower_hardmaxes(ir::Graph& graph);

}  // namespace ucudnn
