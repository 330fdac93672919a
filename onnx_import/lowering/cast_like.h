// CastLike(input, target_type) (opset 15): a Cast to target_type's dtype. Lowered at import into that Cast
// (Note [lowered ops], runtime/ops/lowered_ops.h); target_type's values are not read.
#pragma once

#include "runtime/core/status.h"
#include "runtime/ir/graph.h"

namespace ucudnn {

// Rewrites every CastLike of `graph` (shapes inferred).
Status lower_cast_likes(ir::Graph& graph);

}  // namespace ucudnn
