// Sum and Mean: the elementwise sum (and mean) of any number of broadcasting float32 inputs. Lowered at
// import into a chain of Adds (and a Mul by 1/n) (Note [lowered ops], runtime/ops/lowered_ops.h), which the pointwise
// fusion then joins.
#pragma once

#include "runtime/core/status.h"
#include "runtime/ir/graph.h"

namespace ucudnn {

// Rewrites every Sum and Mean of `graph` (shapes inferred).
Status lower_sums_and_means(ir::Graph& graph);

}  // namespace ucudnn
