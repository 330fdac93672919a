// ConvTranspose's geometry, shared by its shape rule (runtime/ops/conv_transpose.cc) and its lowering
// (onnx_import/lowering/conv_transpose.h), with which the importer runs every ConvTranspose as the data
// gradient of the Conv it transposes (Note [ConvTranspose as ConvGradData], there).
//
// Per spatial axis, with dk = (k - 1) * d + 1 and the natural size n = s * (in - 1) + output_padding + dk:
//   pads given (auto_pad NOTSET):  out = n - pb - pe
//   auto_pad VALID:                out = n, no pads
//   auto_pad SAME_UPPER/LOWER:     out = in * s, total pads n - out
//   output_shape given:            out = output_shape, total pads n - out (pads ignored)
// A total is split as ONNX's reference splits it (halves rounded towards -infinity): SAME_UPPER puts
// the odd element at the end, else at the begin. So a total of -1 (an output_shape one larger than n)
// becomes pad_end -1 without SAME_UPPER: a row the kernel does not reach, which holds the bias alone.
// Other negative totals make a negative pad_begin, which is Unsupported.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/core/shape.h"
#include "runtime/core/status.h"
#include "runtime/ir/attributes.h"

namespace ucudnn {

struct ConvTransposeGeometry {
  std::vector<int64_t> stride, dilation, pad_begin, pad_end, output;  // one per spatial axis
};

// InvalidModel (message without a node prefix) for attributes of the wrong length, non-positive
// strides or dilations, negative pads, an output_padding not below its stride or dilation, an unknown
// auto_pad or an empty output. Unsupported where ucudnn cannot run the op as a Conv's data gradient:
// an output_padding not below the stride (but below the dilation), or an output_shape larger than
// the natural size at the begin, or at the end by output_padding + that many >= the stride.
Expected<ConvTransposeGeometry> conv_transpose_geometry(const ir::Attributes& attrs, const Shape& input_spatial,
                                                        const std::vector<int64_t>& kernel);

}  // namespace ucudnn
