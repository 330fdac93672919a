// ConvTranspose's geometry, shared by its shape rule and lower_conv_transposes (both in
// runtime/ops/conv_transpose.cc), which the importer calls to run every ConvTranspose as the data
// gradient of the Conv it transposes (Note [ConvTranspose as ConvGradData], below).
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

#include "runtime/core/status.h"
#include "runtime/ir/attributes.h"
#include "runtime/ir/graph.h"

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

// Note [ConvTranspose as ConvGradData]
// ConvTranspose(X, W) is the data gradient of the Conv that takes an input of Y's shape to X's with
// the same W ([C, M/group, kernel...] is that Conv's [K, C'/group, kernel...]) and the pads, strides and
// dilations of the geometry above: that Conv's output size, floor((out + pb + pe - dk) / s) + 1, is
// `in` exactly when output_padding < stride. So every ConvTranspose becomes ConvGradData(X, W) with
// input_shape Y's shape, then, with a bias, Add(·, Reshape(B, [M, 1, ...])). The optimizer then
// benchmarks, plans and divides it into micro-batches as the backward-data convolution it is, on
// both backends, and training differentiates it (ConvGradData's gradient rule).
//
// Rewrites every ConvTranspose of `graph` (shapes inferred: the importer calls it after its shape
// rules) so; the new nodes' shapes come from their own rules and must equal the ConvTranspose's.
Status lower_conv_transposes(ir::Graph& graph);

}  // namespace ucudnn
