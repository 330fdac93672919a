// DepthToSpace and SpaceToDepth: blocks of channels moved into space and back (PyTorch's PixelShuffle and
// PixelUnshuffle, super-resolution networks' upsampling). Lowered at import into Reshape → Transpose →
// Reshape (Note [lowered ops], runtime/ops/lowered_ops.h), so both backends run them as the data movement they are.
#pragma once

#include "runtime/core/status.h"
#include "runtime/ir/graph.h"

namespace ucudnn {

// Rewrites every DepthToSpace and SpaceToDepth of `graph` (shapes inferred).
Status lower_depth_to_space(ir::Graph& graph);

}  // namespace ucudnn
