// GridSample (opsets 16, 20, 22): Y [N, C, H_out, W_out] sampled from X [N, C, H, W] at the points of
// Grid [N, H_out, W_out, 2] (x then y, normalized to [-1, 1]). Mode "bilinear", "nearest" or "bicubic"
// (opset 20 renamed them "linear", "nearest", "cubic"; either name is read in any opset), padding_mode
// "zeros", "border" or "reflection", align_corners. The arithmetic both backends share is in
// grid_sample_math.h. Unsupported: volumetric X (rank 5, opset 20's N-D form). No gradient.
#pragma once

#include "runtime/core/status.h"
#include "runtime/core/tensor.h"
#include "runtime/ir/attributes.h"
#include "runtime/ops/grid_sample_math.h"

namespace ucudnn {

// The node's sampling parameters for X `x` and Grid `grid` (shapes the shape rule accepted); InvalidModel
// for an unknown mode or padding_mode (message without a node prefix).
Expected<GridSampleParams> resolve_grid_sample(const ir::Attributes& attrs, const Shape& x, const Shape& grid);

}  // namespace ucudnn
