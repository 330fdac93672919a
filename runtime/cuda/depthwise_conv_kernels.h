// Launcher of ucudnn's own depthwise convolution (runtime/cuda/depthwise_conv_kernels.cu), the
// forward algorithm UCUDNN_DEPTHWISE (runtime/cuda/depthwise_conv.h): a 2-D Conv with
// group = C (each input channel its own group) and M = K / C filters per channel, output channel
// k reading input channel k / M. Float32, NCHW or NHWC (Note [channels-last]); the filter is
// [K, 1, R, S] or [K, R, S, 1] — the same bytes, w[k][r][s], in either layout. Any pads (also
// unequal begin/end: only the begin pads move the windows, the output size is given), strides and
// dilations. Epilogue as Note [fused nodes]: y = act(conv(x, w) + bias + z), each of bias [K], z
// (Y's shape) and the activation (ir::ConvActivation: Relu, SiLU, ...) optional; a NaN passes the
// Relu (as cuDNN's CUDNN_PROPAGATE_NAN).
//
// Kernels: 3×3 and 5×5 windows with horizontal stride 1 or 2 and horizontal dilation 1 run a
// tiled kernel (each thread a few outputs along W, an input row segment and the filter row in
// registers; NHWC: 4 channels a thread; when M = 1, C % 4 == 0 and the pointers are 16-byte
// aligned, float4 loads and stores and the block's filters staged tap-major in shared memory);
// every other shape a plain one (a thread an output element).
// Threads are laid out as rows of the output (N·H' rows in NHWC, N·K·H' in NCHW) by items of a
// row, the row index int64, the item index within a row int32 (prepare checks it fits).
// Only queues work on `stream` and returns the launch error.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "runtime/ir/conv_activation.h"

namespace ucudnn::cuda {

struct DepthwiseGeometry {
  int64_t batch = 0;
  int64_t channels = 0;    // C: input channels = groups
  int64_t multiplier = 1;  // M: filters per input channel; K = C·M output channels
  int64_t height = 0, width = 0;                // input
  int64_t out_height = 0, out_width = 0;        // output
  int64_t kernel_h = 0, kernel_w = 0;           // R, S
  int64_t stride_h = 1, stride_w = 1;
  int64_t dilation_h = 1, dilation_w = 1;
  int64_t pad_top = 0, pad_left = 0;            // begin pads (the end pads only size the output)
  bool channels_last = false;                   // NHWC rather than NCHW
};

struct DepthwiseEpilogue {
  const float* bias = nullptr;  // [K] or nullptr
  const float* z = nullptr;     // a residual input of Y's shape, or nullptr (Note [fused nodes])
  ir::ConvActivation activation;  // none, Relu, or one fuse_depthwise_activation moved here
};

// The largest number of items in one output row any kernel uses for `g` (the plain kernel's):
// launch_depthwise_conv needs it to be at most INT32_MAX.
int64_t depthwise_row_items(const DepthwiseGeometry& g);

// y = act(conv(x, w) + bias + z) for geometry `g` (see the file comment).
cudaError_t launch_depthwise_conv(const float* x, const float* w, float* y, const DepthwiseGeometry& g,
                                  const DepthwiseEpilogue& epilogue, cudaStream_t stream);

}  // namespace ucudnn::cuda
