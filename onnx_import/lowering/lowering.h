// The importer's lowerings of ops no backend runs (Note [lowered ops], runtime/ops/lowered_ops.h), one file per op
// family in this folder; lower_composite_ops runs them all.
#pragma once

#include "runtime/core/status.h"
#include "runtime/ir/graph.h"

namespace ucudnn {

// Lowers every op of UCUDNN_FOR_EACH_LOWERED_OP (runtime/ops/lowered_ops.h) in `graph` (shapes inferred), and the
// 3-D Convs and pools and the Max and Min of other than two operands: what the importer runs.
Status lower_composite_ops(ir::Graph& graph);

}  // namespace ucudnn
