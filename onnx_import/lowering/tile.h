// Tile: X repeated along each axis. Lowered at import into Reshape → Expand → Reshape (Note [lowered ops],
// runtime/ops/lowered_ops.h), so both backends run it as the broadcast it is.
#pragma once

#include "runtime/core/status.h"
#include "runtime/ir/graph.h"

namespace ucudnn {

// Rewrites every Tile of `graph` (shapes inferred).
Status lower_tiles(ir::Graph& graph);

}  // namespace ucudnn
