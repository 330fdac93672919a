// GroupNormalization (opsets 18 and 21), lowered at import into ops ucudnn already runs (Note [lowered ops],
// runtime/ops/lowered_ops.h).
#pragma once

#include "runtime/core/status.h"
#include "runtime/ir/graph.h"

namespace ucudnn {

// Rewrites every GroupNormalization of `graph` (shapes inferred): X [N, C, ...] reshaped to [N, G, rest]
// (G = num_groups) is normalized over its last axis (NormalizationLowering, normalization_lowering.h), then
// scaled and shifted — per group on that view at opset 18 (Scale and B [G]), per channel after the
// reshape back to X's shape from opset 21 (Scale and B [C]).
Status lower_group_norms(ir::Graph& graph);

}  // namespace ucudnn
