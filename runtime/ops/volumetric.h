// 3-D convolutions and pools (X [N, C, D, H, W]: video, volumes) lowered at import into the 2-D ones every
// backend plans and runs (Note [lowered ops], lowering.h). Conv, MaxPool and AveragePool nodes of 1-D and
// 2-D windows are left as they are.
//
// Note [3-D convolution as 2-D ones]
// Y[:, :, d] = Σ_kd Conv2d(X[:, :, d·sd + kd·dd - pd], W[:, :, kd]): with X's depth padded (Pad) and moved
// next to the batch (Transpose to [N, D, C, H, W]), the depths that kernel plane kd reads are one strided
// Slice, which a Reshape makes a batch of N·Do images [N·Do, C, H, W]; a 2-D Conv with W's plane kd (a Slice
// and Reshape of W, so that training reaches W itself; the bias on plane 0 only) gives that plane's share,
// the shares are added, and a Reshape and Transpose put Y back as [N, M, Do, Ho, Wo]. The planner sees Kd
// 2-D convolutions (micro-batched, their algorithms timed) and the fusion passes their Adds.
//
// Note [3-D pools as 2-D ones]
// A pooling window is a box, so a pool over (D, H, W) is a pool over (H, W) of X as [N, C·D, H, W], then a
// pool over D of that as [N, C, D, Ho·Wo] (kernel (kd, 1)): the max of the maxes is the max, and the mean of
// the means is the mean because the count of positions in a box, padding counted or not, is the product of
// the counts along each axis. Pads, strides, dilations and ceil_mode apply per axis, as in 3-D.
#pragma once

#include "runtime/core/status.h"
#include "runtime/ir/graph.h"

namespace ucudnn {

// Rewrites every 3-D Conv, MaxPool and AveragePool of `graph` (shapes inferred).
Status lower_volumetric_ops(ir::Graph& graph);

}  // namespace ucudnn
