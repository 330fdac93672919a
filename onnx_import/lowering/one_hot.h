// OneHot (opset 9, 11): values[1] where an index names the position along the new axis, values[0]
// elsewhere. Lowered at import (Note [lowered ops], runtime/ops/lowered_ops.h):
//   i      = Unsqueeze(Cast(indices, int64), axis)           (a float index is truncated, as the spec casts it)
//   hit    = Equal(i, [0, ..., depth-1]) or Equal(i, [-depth, ..., -1])   along the new axis
//   output = Where(hit, values[1], values[0])
// so an index outside [-depth, depth) gives a row of values[0], as the spec says. depth must be known
// when the model is loaded (it sets the output's shape).
#pragma once

#include "runtime/core/status.h"
#include "runtime/ir/graph.h"

namespace ucudnn {

// Rewrites every OneHot of `graph` (shapes inferred).
Status lower_one_hots(ir::Graph& graph);

}  // namespace ucudnn
