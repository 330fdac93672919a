// Upsample (opsets 7 and 9, deprecated since 10; older exporters and model zoos still write it): a
// Resize by constant scales. Lowered at import into the Resize of opset 11 that computes the same
// (Note [lowered ops], runtime/ops/lowered_ops.h).
#pragma once

#include "runtime/core/status.h"
#include "runtime/ir/graph.h"

namespace ucudnn {

// Rewrites every Upsample of `graph` (shapes inferred).
Status lower_upsamples(ir::Graph& graph);

}  // namespace ucudnn
