// MaxUnpool (opsets 9, 11): X's values put back where MaxPool's Indices say they came from, zeros elsewhere,
// in the unpooled shape U: per spatial axis (in - 1)·stride + kernel - pad_begin - pad_end. An output_shape
// (input 2, known at load; no dim below U's) pads U with zeros at the end of each axis, as ONNX's reference
// does (the indices count in U). Lowered at import (Note [lowered ops], runtime/ops/lowered_ops.h) into ops both
// backends run:
//   Y = Pad(Reshape(ScatterElements(zeros [numel(U)], Reshape(I, [-1]), Reshape(X, [-1]), axis 0), U))
// so an index outside U is refused where it is read (ScatterElements counts a negative one from the end, as
// MaxPool's Indices never hold).
#pragma once

#include "runtime/core/status.h"
#include "runtime/ir/graph.h"

namespace ucudnn {

// Rewrites every MaxUnpool of `graph` (shapes inferred).
Status lower_max_unpools(ir::Graph& graph);

}  // namespace ucudnn
