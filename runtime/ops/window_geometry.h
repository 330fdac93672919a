// Sliding-window geometry shared by Conv and the pools (MaxPool, AveragePool).
//
// From the ONNX attributes auto_pad / pads / strides / dilations, the spatial
// kernel size (kernel_shape, or the weight's spatial dims for Conv), ceil_mode and
// the input's spatial dims, computes the output's spatial dims and the effective
// begin/end padding of every spatial axis. Used by the shape rules and again by
// the CPU kernels on each micro-batch's shape, so both agree by construction.
//
// Output size per axis, with dk = (k - 1) * d + 1:
//   NOTSET:      floor((in + pb + pe - dk) / s) + 1   (ceil with ceil_mode = 1; then,
//                as PyTorch does, a last window starting past in + pb is dropped)
//   VALID:       floor((in - dk) / s) + 1, no padding
//   SAME_UPPER/  ceil(in / s); total padding max(0, (out - 1) * s + dk - in), split
//   SAME_LOWER:  evenly, the odd element at the end (UPPER) or the begin (LOWER).
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/core/status.h"
#include "runtime/ir/attributes.h"

namespace ucudnn {

struct WindowGeometry {
  std::vector<int64_t> input, kernel, stride, dilation, pad_begin, pad_end, output;
  size_t rank() const { return input.size(); }
};

// Reads ints attribute `name` of `expected` values (one per spatial axis, or two for pads), or
// `expected` copies of `fallback` when absent; InvalidModel for another length. Also ConvTranspose's.
Status read_axis_ints(const ir::Attributes& attrs, const char* name, size_t expected, int64_t fallback,
                      std::vector<int64_t>* out);

// Computes the geometry; a non-OK status (InvalidModel, message without a node
// prefix) for attributes of the wrong length, non-positive kernel/stride/dilation,
// negative pads, an unknown auto_pad or an empty output. Attributes not present
// take their spec defaults (strides/dilations 1, pads 0, auto_pad NOTSET).
Expected<WindowGeometry> compute_window_geometry(const ir::Attributes& attrs, const Shape& input_spatial,
                                                 const std::vector<int64_t>& kernel, bool ceil_mode);

}  // namespace ucudnn
