// ConvTranspose, lowered at import into ConvGradData and its bias (Note [lowered ops], runtime/ops/lowered_ops.h;
// the geometry, shared with its shape rule, is runtime/ops/conv_transpose.h). A 3-D one is first made 2-D ones
// (Note [3-D ConvTranspose as 2-D ones], volumetric.h).
#pragma once

#include "runtime/core/status.h"
#include "runtime/ir/graph.h"

namespace ucudnn {

// Note [ConvTranspose as ConvGradData]
// ConvTranspose(X, W) is the data gradient of the Conv that takes an input of Y's shape to X's with
// the same W ([C, M/group, kernel...] is that Conv's [K, C'/group, kernel...]) and the pads, strides and
// dilations of its geometry (runtime/ops/conv_transpose.h): that Conv's output size,
// floor((out + pb + pe - dk) / s) + 1, is `in` exactly when output_padding < stride. So every ConvTranspose
// becomes ConvGradData(X, W) with input_shape Y's shape, then, with a bias, Add(·, Reshape(B, [M, 1, ...])).
// The optimizer then benchmarks, plans and divides it into micro-batches as the backward-data convolution it
// is, on both backends, and training differentiates it (ConvGradData's gradient rule).
//
// Rewrites every ConvTranspose of `graph` (shapes inferred: the importer calls it after its shape
// rules) so; the new nodes' shapes come from their own rules and must equal the ConvTranspose's.
Status lower_conv_transposes(ir::Graph& graph);

}  // namespace ucudnn
