// 3-D convolutions and pools (X [N, C, D, H, W]: video, volumes) lowered at import into the 2-D ones every
// backend plans and runs (Note [lowered ops], runtime/ops/lowered_ops.h). Conv, MaxPool and AveragePool nodes
// of 1-D and 2-D windows are left as they are.
//
// Note [3-D convolution as 2-D ones]
// Y[:, :, t] = Conv2d(X[:, :, t·sd + kd·dd - pd for kd < Kd] as [N, C·Kd, H, W], W as [M, C/group·Kd, kh, kw]):
// the Kd frames that output depth t reads, taken as channels (channel c·Kd + kd, which is how W's own
// [M, C/group, Kd, kh, kw] flattens, groups included), make one 2-D convolution per output depth, all of
// batch N and of the same shape, so the planner times one kernel and plans them as the mini-batch's
// convolutions they are. X is padded in depth first (a Pad), W reshaped once (folded: it is constant), the
// bias added by each; the Do outputs, Unsqueezed to [N, M, 1, Ho, Wo], are Concatenated along depth. The
// strided Slices copy each input frame about Kd/sd times: im2col along depth only.
//
// Note [3-D ConvTranspose as 2-D ones]
// Output depth t of a transposed convolution sums, over the taps kd that reach it from a frame
// (t = frame · sd - pd + kd · dd), the 2-D transposed convolution of that frame with W[:, :, kd]. So each t
// is one 2-D ConvTranspose (written, as lower_conv_transposes writes one, as a ConvGradData) of its P frames
// taken as channels ([N, C · P, H, W], a Gather and a Reshape) with those taps' weights as [C · P, M/group,
// kh, kw] (rearranged at load when W is a constant, else by a Gather, a Transpose and a Reshape; one per set of
// taps, which the inner depths share); a depth no frame reaches is zeros. The Do outputs are
// Concatenated along depth and the bias added once. No zeros are inserted between frames, so a stride costs
// nothing; the strides' P differ by at most sd shapes of 2-D kernel, each planned like any other.
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
// Rewrites every 3-D ConvTranspose of `graph` (shapes inferred); before lower_conv_transposes.
Status lower_volumetric_conv_transposes(ir::Graph& graph);

}  // namespace ucudnn
