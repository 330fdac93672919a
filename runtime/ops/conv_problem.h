// ConvProblem: a Conv node reduced to 2-D with its shapes — batch, channels, kernel, strides,
// dilations, begin pads, output size and layout — read from its attributes (window_geometry.h).
// The CPU's convolutions run on it (runtime/cpu/conv_algorithms.h) and the optimizer keys kernels
// by it (optimizer/conv_kernels.cc). Its errors are the CPU convolution's: 1-D and 2-D only.
#pragma once

#include <cstdint>

#include "runtime/core/shape.h"
#include "runtime/core/status.h"
#include "runtime/ir/graph.h"

namespace ucudnn {

// A Conv reduced to 2-D (a 1-D conv has in_h = kernel_h = out_h = 1).
struct ConvProblem {
  int64_t batch = 0, in_channels = 0, in_h = 1, in_w = 1;
  int64_t out_channels = 0, group = 1;
  int64_t kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  int64_t pad_top = 0, pad_left = 0;
  int64_t out_h = 1, out_w = 1;
  bool channels_last = false;  // X, Y NHWC and W [M, R, S, C/group] (2-D only)

  int64_t channels_per_group() const { return in_channels / group; }
  int64_t filters_per_group() const { return out_channels / group; }
  int64_t patch_size() const { return channels_per_group() * kernel_h * kernel_w; }  // K per group
  int64_t out_plane() const { return out_h * out_w; }                                 // P
};

// The problem for `node` with input shape x and weight shape w (1-D or 2-D; NHWC shapes
// when the node is channels-last); errors name the node.
Expected<ConvProblem> conv_problem(const ir::Node& node, const Shape& x, const Shape& w);

}  // namespace ucudnn
