// Resize (opset 11+): what its attributes and its scales or sizes mean, resolved once for the shape
// rule (runtime/ops/resize.cc), the CPU kernel (runtime/cpu/resize.cc) and the CUDA kernel
// (runtime/cuda/resize.cc); the coordinate arithmetic they share is in resize_coordinates.h, so that
// every backend picks the same source elements.
//
// Supported: X of rank 3 or 4 ([N, C, W] or [N, C, H, W]) resized on its spatial axes (N and C keep
// their size); mode "nearest" (every nearest_mode), "linear" or "cubic" (cubic_coeff_a, exclude_outside);
// coordinate_transformation_mode half_pixel, half_pixel_symmetric, pytorch_half_pixel, align_corners or
// asymmetric. Unsupported (with the reason): tf_crop_and_resize and tf_half_pixel_for_nn, antialias when
// shrinking (linear and cubic), a keep_aspect_ratio_policy other than "stretch", scales or sizes not known
// at load.
//
// Note [resize coordinates]
// The source coordinate of output index i along an axis is computed in float with additions,
// subtractions and one division or multiplication each, never a multiply-add: a compiler cannot
// contract them into fused multiply-adds, and IEEE division is correctly rounded on the CPU and (nvcc's
// default, -prec-div=true) on the GPU, so a nearest pick that falls on a tie falls the same way on
// both backends.
#pragma once

#include "runtime/core/status.h"
#include "runtime/core/tensor.h"
#include "runtime/ir/attributes.h"
#include "runtime/ops/resize_coordinates.h"

namespace ucudnn {

// What resolve_resize gives: the coordinate rules and axes, and Y's shape.
struct ResolvedResize {
  ResizeParams params;
  Shape output;
};

// Resolves a Resize of X `x` from its attributes and its constant scales or sizes (nullptr when
// absent; an empty scales tensor counts as absent). InvalidModel or Unsupported (message without a
// node prefix) otherwise.
Expected<ResolvedResize> resolve_resize(const ir::Attributes& attrs, const Shape& x, const Tensor* scales,
                                        const Tensor* sizes);

}  // namespace ucudnn
