// ucudnn's own CUDA kernels for pooling, LRN and BatchNormalization in the
// configurations cuDNN cannot express (see window_kernels.h for the contracts).
// Grid-stride loops over the output, 256 threads a block, as kernels.cu.
// A pool of fewer than 3 spatial axes runs as a 3-D one with leading unit axes.
#include <algorithm>
#include <cstdint>

#include "runtime/cuda/window_kernels.h"
#include "runtime/cuda/grid_loop.cuh"

namespace ucudnn::cuda {

namespace {

// Taps t < kernel of one axis whose position start + t·dilation lies in [0, in)
// (`inside`) and below in + pad_end (`padded`; a window never starts before -pad_begin).
struct AxisTaps {
  int64_t inside = 0, padded = 0;
};

__device__ __forceinline__ AxisTaps count_taps(int64_t start, int64_t kernel, int64_t dilation, int64_t in,
                                               int64_t pad_end) {
  AxisTaps taps;
  for (int64_t t = 0; t < kernel; ++t) {
    const int64_t x = start + t * dilation;
    taps.inside += x >= 0 && x < in;
    taps.padded += x < in + pad_end;
  }
  return taps;
}

template <PoolMode Mode>
__global__ void window_pool_kernel(const float* src, float* dst, int64_t n, PoolGeometry g, int64_t* indices,
                                   bool column_major) {
  UCUDNN_GRID_LOOP(i, n) {
    int64_t rest = i, c = 0, o[kMaxPoolDims];
    if (g.channels_last) {
      c = rest % g.channels;
      rest /= g.channels;
    }
    for (int d = kMaxPoolDims - 1; d >= 0; --d) {
      o[d] = rest % g.output[d];
      rest /= g.output[d];
    }
    if (!g.channels_last) {
      c = rest % g.channels;
      rest /= g.channels;
    }
    const int64_t plane = g.input[0] * g.input[1] * g.input[2];
    // Element (b, c, x0, x1, x2) of X lies at base + ((x0·in1 + x1)·in2 + x2)·step.
    const int64_t base = g.channels_last ? rest * plane * g.channels + c : (rest * g.channels + c) * plane;
    const int64_t step = g.channels_last ? g.channels : 1;
    int64_t start[kMaxPoolDims];
    for (int d = 0; d < kMaxPoolDims; ++d) start[d] = o[d] * g.stride[d] - g.pad_begin[d];
    float best = -INFINITY, sum = 0.0f;
    int64_t best_at = -1;  // (x0, x1, x2) of the maximum, row-major
    for (int64_t k0 = 0; k0 < g.kernel[0]; ++k0) {
      const int64_t x0 = start[0] + k0 * g.dilation[0];
      if (x0 < 0 || x0 >= g.input[0]) continue;
      for (int64_t k1 = 0; k1 < g.kernel[1]; ++k1) {
        const int64_t x1 = start[1] + k1 * g.dilation[1];
        if (x1 < 0 || x1 >= g.input[1]) continue;
        const int64_t row = base + (x0 * g.input[1] + x1) * g.input[2] * step;
        for (int64_t k2 = 0; k2 < g.kernel[2]; ++k2) {
          const int64_t x2 = start[2] + k2 * g.dilation[2];
          if (x2 < 0 || x2 >= g.input[2]) continue;
          const float v = src[row + x2 * step];
          if constexpr (Mode == PoolMode::kMax) {
            if (best_at < 0 || v > best || isnan(v)) {
              best = v;
              best_at = (x0 * g.input[1] + x1) * g.input[2] + x2;
            }
          } else {
            sum += v;
          }
        }
      }
    }
    if constexpr (Mode == PoolMode::kMax) {
      dst[i] = best;
      if (indices != nullptr) {
        int64_t at = best_at;
        if (column_major && at >= 0) {
          const int64_t x2 = at % g.input[2], x1 = at / g.input[2] % g.input[1], x0 = at / (g.input[1] * g.input[2]);
          at = x0 + (x1 + x2 * g.input[1]) * g.input[0];
        }
        indices[i] = at < 0 ? -1 : base + at;
      }
    } else {
      int64_t count = 1;
      for (int d = 0; d < kMaxPoolDims; ++d) {
        const AxisTaps taps = count_taps(start[d], g.kernel[d], g.dilation[d], g.input[d], g.pad_end[d]);
        count *= Mode == PoolMode::kAverageIncludePad ? taps.padded : taps.inside;
      }
      dst[i] = count > 0 ? sum / static_cast<float>(count) : 0.0f;
    }
  }
}

__global__ void lrn_kernel(const float* src, float* dst, int64_t n, int64_t channels, int64_t inner, int64_t before,
                           int64_t after, float coefficient, float beta, float bias) {
  UCUDNN_GRID_LOOP(i, n) {
    const int64_t j = i % inner, c = (i / inner) % channels, b = i / (inner * channels);
    const int64_t first = c - before > 0 ? c - before : 0;
    const int64_t last = c + after < channels - 1 ? c + after : channels - 1;
    float sum = 0.0f;
    for (int64_t k = first; k <= last; ++k) {
      const float v = src[(b * channels + k) * inner + j];
      sum += v * v;
    }
    dst[i] = src[i] / powf(bias + coefficient * sum, beta);
  }
}

__global__ void batch_norm_kernel(const float* src, float* dst, int64_t n, int64_t channels, int64_t inner,
                                  const float* scale, const float* bias, const float* mean, const float* var,
                                  float epsilon) {
  UCUDNN_GRID_LOOP(i, n) {
    const int64_t c = (i / inner) % channels;
    const float a = scale[c] / sqrtf(var[c] + epsilon);
    dst[i] = a * src[i] + (bias[c] - mean[c] * a);
  }
}

}  // namespace

cudaError_t launch_window_pool(PoolMode mode, const float* src, float* dst, const PoolGeometry& geometry,
                               cudaStream_t stream, int64_t* indices, bool column_major) {
  if (geometry.rank < 1 || geometry.rank > kMaxPoolDims) return cudaErrorInvalidValue;
  const PoolGeometry g = pool_geometry_as_3d(geometry);
  const int64_t n = g.batch * g.channels * g.output[0] * g.output[1] * g.output[2];
  if (n == 0) return cudaSuccess;
  const unsigned blocks = blocks_for(n);
  switch (mode) {
    case PoolMode::kMax:
      window_pool_kernel<PoolMode::kMax><<<blocks, kThreads, 0, stream>>>(src, dst, n, g, indices, column_major);
      break;
    case PoolMode::kAverageExcludePad:
      window_pool_kernel<PoolMode::kAverageExcludePad><<<blocks, kThreads, 0, stream>>>(src, dst, n, g, nullptr, false);
      break;
    case PoolMode::kAverageIncludePad:
      window_pool_kernel<PoolMode::kAverageIncludePad><<<blocks, kThreads, 0, stream>>>(src, dst, n, g, nullptr, false);
      break;
  }
  return cudaGetLastError();
}

cudaError_t launch_lrn(const float* src, float* dst, int64_t batch, int64_t channels, int64_t inner, int64_t size,
                       float alpha, float beta, float bias, cudaStream_t stream) {
  const int64_t n = batch * channels * inner;
  if (n == 0) return cudaSuccess;
  if (size < 1) return cudaErrorInvalidValue;
  const int64_t before = (size - 1) / 2, after = size - 1 - before;
  lrn_kernel<<<blocks_for(n), kThreads, 0, stream>>>(src, dst, n, channels, inner, before, after,
                                                     alpha / static_cast<float>(size), beta, bias);
  return cudaGetLastError();
}

cudaError_t launch_batch_norm(const float* src, float* dst, int64_t batch, int64_t channels, int64_t inner,
                              const float* scale, const float* bias, const float* mean, const float* var,
                              float epsilon, cudaStream_t stream) {
  const int64_t n = batch * channels * inner;
  if (n == 0) return cudaSuccess;
  batch_norm_kernel<<<blocks_for(n), kThreads, 0, stream>>>(src, dst, n, channels, inner, scale, bias, mean, var,
                                                            epsilon);
  return cudaGetLastError();
}

namespace {

// NCHW: X is rows of `spatial` contiguous values, one per (n, c); a warp sums a row (lanes strided,
// then shuffles), kWarpsPerBlock rows a block at a time (grid-stride over the rows).
constexpr int kWarpsPerBlock = 8;

__global__ void global_average_rows_kernel(const float* __restrict__ src, float* __restrict__ dst, int64_t rows,
                                           int64_t spatial) {
  for (int64_t row = blockIdx.x * int64_t{kWarpsPerBlock} + threadIdx.y; row < rows;
       row += int64_t{kWarpsPerBlock} * gridDim.x) {
    const float* x = src + row * spatial;
    float sum = 0.f;
    for (int64_t i = threadIdx.x; i < spatial; i += 32) sum += __ldg(x + i);
    for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
    if (threadIdx.x == 0) dst[row] = sum / static_cast<float>(spatial);
  }
}

// NHWC: X is [batch, spatial, channels]; block (n, x) sums channels x·32 .. x·32+31 of sample n, the 32
// rows of threads taking every 32nd spatial position, then one thread a channel adds the 32 partial
// sums from shared memory in a fixed order (the result does not depend on timing).
constexpr int kRowsPerBlock = 32;

__global__ void global_average_channels_last_kernel(const float* __restrict__ src, float* __restrict__ dst,
                                                    int64_t spatial, int64_t channels) {
  __shared__ float partial[kRowsPerBlock][33];  // padded against bank conflicts
  const int64_t c = blockIdx.y * int64_t{32} + threadIdx.x;
  const float* x = src + static_cast<int64_t>(blockIdx.x) * spatial * channels + c;
  float sum = 0.f;
  if (c < channels)
    for (int64_t i = threadIdx.y; i < spatial; i += kRowsPerBlock) sum += __ldg(x + i * channels);
  partial[threadIdx.y][threadIdx.x] = sum;
  __syncthreads();
  if (threadIdx.y != 0 || c >= channels) return;
  float total = 0.f;
  for (int r = 0; r < kRowsPerBlock; ++r) total += partial[r][threadIdx.x];
  dst[static_cast<int64_t>(blockIdx.x) * channels + c] = total / static_cast<float>(spatial);
}

__global__ void bias_activation_kernel(float* __restrict__ y, const float* __restrict__ bias, int64_t n,
                                       int64_t channels, int64_t inner, ir::ConvActivation activation) {
  UCUDNN_GRID_LOOP(i, n) {
    const float b = bias != nullptr ? __ldg(bias + (i / inner) % channels) : 0.f;
    y[i] = ir::apply_conv_activation(activation, y[i] + b);
  }
}

}  // namespace

cudaError_t launch_bias_activation(float* y, const float* bias, int64_t n, int64_t channels, int64_t inner,
                                   ir::ConvActivation activation, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  bias_activation_kernel<<<blocks_for(n), kThreads, 0, stream>>>(y, bias, n, channels, inner, activation);
  return cudaGetLastError();
}

cudaError_t launch_global_average_pool(const float* src, float* dst, int64_t batch, int64_t channels, int64_t spatial,
                                       bool channels_last, cudaStream_t stream) {
  if (batch == 0 || channels == 0) return cudaSuccess;
  if (channels_last) {
    // The batch along x (up to 2^31 - 1), 32-channel tiles along y (up to 65535: 2M channels).
    if ((channels + 31) / 32 > 65535) return cudaErrorInvalidConfiguration;
    const dim3 grid(static_cast<unsigned>(batch), static_cast<unsigned>((channels + 31) / 32));
    global_average_channels_last_kernel<<<grid, dim3(32, kRowsPerBlock), 0, stream>>>(src, dst, spatial, channels);
  } else {
    const int64_t rows = batch * channels;
    const int64_t blocks = std::min<int64_t>((rows + kWarpsPerBlock - 1) / kWarpsPerBlock, int64_t{1} << 20);
    global_average_rows_kernel<<<static_cast<unsigned>(blocks), dim3(32, kWarpsPerBlock), 0, stream>>>(src, dst, rows,
                                                                                                      spatial);
  }
  return cudaGetLastError();
}

PoolGeometry pool_geometry_as_3d(const PoolGeometry& g) {
  PoolGeometry full = g;
  const int shift = kMaxPoolDims - g.rank;
  for (int d = 0; d < kMaxPoolDims; ++d) {
    const bool unit = d < shift;
    const int from = d - shift;
    full.input[d] = unit ? 1 : g.input[from];
    full.output[d] = unit ? 1 : g.output[from];
    full.kernel[d] = unit ? 1 : g.kernel[from];
    full.stride[d] = unit ? 1 : g.stride[from];
    full.dilation[d] = unit ? 1 : g.dilation[from];
    full.pad_begin[d] = unit ? 0 : g.pad_begin[from];
    full.pad_end[d] = unit ? 0 : g.pad_end[from];
  }
  full.rank = kMaxPoolDims;
  return full;
}

}  // namespace ucudnn::cuda
