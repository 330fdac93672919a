// MaxUnpool's unpooled shape, checked by its shape rule (max_unpool.cc) and read by its lowering
// (onnx_import/lowering/max_unpool.h).
#pragma once

#include "runtime/core/shape.h"
#include "runtime/core/status.h"
#include "runtime/ir/attributes.h"

namespace ucudnn {

// The shape U that MaxUnpool of X [N, C, spatial...] with window `attrs` (kernel_shape, strides, pads)
// unpools into, before any output_shape pads it: per spatial axis (in - 1)·stride + kernel - pad_begin -
// pad_end. InvalidModel for a window attribute of the wrong length, a non-positive kernel or stride, a
// negative pad, or a negative size.
Expected<Shape> max_unpool_shape(const ir::Attributes& attrs, const Shape& x);

}  // namespace ucudnn
