// Helpers shared by the CUDA kernels of elementwise and data-movement ops:
// building a StridedLayout (kernels.h) from shapes.
#pragma once

#include "runtime/core/shape.h"
#include "runtime/cuda/kernels.h"

namespace ucudnn::cuda {

// Layout of `out` reading operand `which` of shape `operand` broadcast to it
// (right-aligned; stride 0 on broadcast dims). False when rank > kMaxDims.
bool set_broadcast_layout(const Shape& out, const Shape& operand, int which, StridedLayout* layout);

}  // namespace ucudnn::cuda
