// Launchers of ucudnn's own CUDA kernels for what cuDNN cannot express
// (runtime/cuda/window_kernels.cu): window pooling with any pads (asymmetric,
// SAME_*), ceil_mode and dilations; LRN of any size; inference
// BatchNormalization with any epsilon. Same contracts as kernels.h: each only
// queues work on `stream` and returns the launch error; int64 index arithmetic;
// one thread an output element, consecutive threads on consecutive outputs.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "runtime/ir/conv_activation.h"

namespace ucudnn::cuda {

inline constexpr int kMaxPoolDims = 3;

// The geometry of a window pool (runtime/ops/window_geometry.h's WindowGeometry
// for `rank` spatial axes). X is [N, C, spatial...] or, with channels_last,
// [N, spatial..., C]; Y likewise with the output's spatial dims.
struct PoolGeometry {
  int rank = 0;  // spatial axes, 1 to kMaxPoolDims
  int64_t batch = 0, channels = 0;
  bool channels_last = false;
  int64_t input[kMaxPoolDims] = {}, output[kMaxPoolDims] = {}, kernel[kMaxPoolDims] = {};
  int64_t stride[kMaxPoolDims] = {}, dilation[kMaxPoolDims] = {};
  int64_t pad_begin[kMaxPoolDims] = {}, pad_end[kMaxPoolDims] = {};
};

// `g` with its axes moved to the end of kMaxPoolDims, the leading ones unit axes: every pool
// kernel (forward and backward) runs as a 3-D one.
PoolGeometry pool_geometry_as_3d(const PoolGeometry& g);

// Max: the largest tap inside the input (-inf when none is; NaN propagates, as
// cuDNN's CUDNN_PROPAGATE_NAN). Averages divide the sum of the taps inside the
// input by the taps inside the input (exclude) or inside the padded input
// [-pad_begin, input + pad_end) (include): runtime/cpu/pooling.cc's semantics.
// kMax may also write `indices` (non-null, NCHW only): each maximum's flat index in X, its spatial position
// row-major, or column-major with `column_major` (MaxPool's Indices output, runtime/ops/pooling.cc); -1 for
// a window with no tap inside X.
enum class PoolMode { kMax, kAverageExcludePad, kAverageIncludePad };
cudaError_t launch_window_pool(PoolMode mode, const float* src, float* dst, const PoolGeometry& geometry,
                               cudaStream_t stream, int64_t* indices = nullptr, bool column_major = false);

// GlobalAveragePool: y[n, c] = the mean of X's `spatial` values of (n, c), X being [batch, channels,
// spatial] or, channels_last, [batch, spatial, channels]. Summed in float in a fixed order (one
// warp a row; channels-last: 32 strided partial sums a channel, then added in order). Its own kernel,
// not cuDNN's pooling with a window of the whole image, which took 1.5 ms of EfficientNet-B1's
// 24 pools at batch 128 on the H200 in NHWC.
cudaError_t launch_global_average_pool(const float* src, float* dst, int64_t batch, int64_t channels, int64_t spatial,
                                       bool channels_last, cudaStream_t stream);

// A Conv's epilogue after cuDNN for an activation cuDNN's fused call lacks (Note [fused nodes]), in
// place over Y's n elements: y = act(y + bias[c]) (bias may be null), c = (i / inner) % channels
// (NCHW: inner the spatial size; NHWC: 1).
cudaError_t launch_bias_activation(float* y, const float* bias, int64_t n, int64_t channels, int64_t inner,
                                   ir::ConvActivation activation, cudaStream_t stream);

// LRN over X = [batch, channels, inner]: y = x / (bias + alpha / size · Σ x²)^beta,
// the sum over channels [c - floor((size-1)/2), c + ceil((size-1)/2)] ∩ [0, C).
cudaError_t launch_lrn(const float* src, float* dst, int64_t batch, int64_t channels, int64_t inner, int64_t size,
                       float alpha, float beta, float bias, cudaStream_t stream);

// Inference BatchNormalization over X = [batch, channels, inner], the per-channel
// scale, B, mean and var read on the device: y = a·x + b with
// a = scale / sqrt(var + epsilon), b = B - mean·a (as the CPU kernel folds it).
cudaError_t launch_batch_norm(const float* src, float* dst, int64_t batch, int64_t channels, int64_t inner,
                              const float* scale, const float* bias, const float* mean, const float* var,
                              float epsilon, cudaStream_t stream);

}  // namespace ucudnn::cuda
