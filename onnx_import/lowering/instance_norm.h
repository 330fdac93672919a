// InstanceNormalization, lowered at import into ops ucudnn already runs (Note [lowered ops],
// runtime/ops/lowered_ops.h).
#pragma once

#include "runtime/core/status.h"
#include "runtime/ir/graph.h"

namespace ucudnn {

// Rewrites every InstanceNormalization of `graph` (shapes inferred) as the normalization of each sample's
// channel over the spatial axes 2.. of X [N, C, ...] (NormalizationLowering, normalization_lowering.h),
// with Scale [C] and B [C] reshaped to [C, 1, ..., 1]. PyTorch exports GroupNorm (before opset 18) as an
// InstanceNormalization of X reshaped to [N, G, -1], so this covers it too.
Status lower_instance_norms(ir::Graph& graph);

}  // namespace ucudnn
