// The backward pools' CUDA kernels (see pooling_grad_kernels.h for the contracts). A pool of fewer
// than 3 spatial axes runs as a 3-D one with leading unit axes; grid-stride loops over dX.
#include <cstdint>

#include "runtime/cuda/grid_loop.cuh"
#include "runtime/cuda/pooling_grad_kernels.h"

namespace ucudnn::cuda {

namespace {

constexpr int kDims = kMaxPoolDims;

// `g` with its axes moved to the end of kDims, the leading ones unit axes.
PoolGeometry padded_to_3d(const PoolGeometry& g) {
  PoolGeometry full = g;
  const int shift = kDims - g.rank;
  for (int d = 0; d < kDims; ++d) {
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
  full.rank = kDims;
  return full;
}

// Position along axis d of tap k of window o (may lie in the padding).
__device__ __forceinline__ int64_t tap(const PoolGeometry& g, int d, int64_t o, int64_t k) {
  return o * g.stride[d] - g.pad_begin[d] + k * g.dilation[d];
}

// The window along axis d whose tap k lies at `position`, or -1 when none does.
__device__ __forceinline__ int64_t window_of(const PoolGeometry& g, int d, int64_t position, int64_t k) {
  const int64_t t = position + g.pad_begin[d] - k * g.dilation[d];
  if (t < 0 || t % g.stride[d] != 0) return -1;
  const int64_t o = t / g.stride[d];
  return o < g.output[d] ? o : -1;
}

// The plane offset of the tap window o's forward max picks, or -1 for a window with no tap inside.
__device__ int64_t window_choice(const float* plane, const PoolGeometry& g, const int64_t o[kDims]) {
  int64_t chosen = -1;
  float best = 0.0f;
  for (int64_t k0 = 0; k0 < g.kernel[0]; ++k0) {
    const int64_t x0 = tap(g, 0, o[0], k0);
    if (x0 < 0 || x0 >= g.input[0]) continue;
    for (int64_t k1 = 0; k1 < g.kernel[1]; ++k1) {
      const int64_t x1 = tap(g, 1, o[1], k1);
      if (x1 < 0 || x1 >= g.input[1]) continue;
      for (int64_t k2 = 0; k2 < g.kernel[2]; ++k2) {
        const int64_t x2 = tap(g, 2, o[2], k2);
        if (x2 < 0 || x2 >= g.input[2]) continue;
        const int64_t at = (x0 * g.input[1] + x1) * g.input[2] + x2;
        const float v = plane[at];
        if (chosen < 0 || v > best || isnan(v)) {
          chosen = at;
          best = v;
        }
      }
    }
  }
  return chosen;
}

// The forward average's divisor for window o.
__device__ int64_t window_divisor(const PoolGeometry& g, const int64_t o[kDims], bool include_pad) {
  int64_t count = 1;
  for (int d = 0; d < kDims; ++d) {
    int64_t taps = 0;
    for (int64_t k = 0; k < g.kernel[d]; ++k) {
      const int64_t x = tap(g, d, o[d], k);
      taps += include_pad ? x < g.input[d] + g.pad_end[d] : x >= 0 && x < g.input[d];
    }
    count *= taps;
  }
  return count;
}

template <bool Max>
__global__ void pool_grad_kernel(const float* dy, const float* x, float* dx, int64_t n, PoolGeometry g,
                                 bool include_pad) {
  const int64_t in_plane = g.input[0] * g.input[1] * g.input[2];
  const int64_t out_plane = g.output[0] * g.output[1] * g.output[2];
  UCUDNN_GRID_LOOP(i, n) {
    const int64_t plane = i / in_plane, at = i - plane * in_plane;
    const int64_t p[kDims] = {at / (g.input[1] * g.input[2]), (at / g.input[2]) % g.input[1], at % g.input[2]};
    const float* dy_plane = dy + plane * out_plane;
    float sum = 0.0f;
    int64_t o[kDims];
    for (int64_t k0 = 0; k0 < g.kernel[0]; ++k0) {
      if ((o[0] = window_of(g, 0, p[0], k0)) < 0) continue;
      for (int64_t k1 = 0; k1 < g.kernel[1]; ++k1) {
        if ((o[1] = window_of(g, 1, p[1], k1)) < 0) continue;
        for (int64_t k2 = 0; k2 < g.kernel[2]; ++k2) {
          if ((o[2] = window_of(g, 2, p[2], k2)) < 0) continue;
          const float grad = dy_plane[(o[0] * g.output[1] + o[1]) * g.output[2] + o[2]];
          if constexpr (Max) {
            if (window_choice(x + plane * in_plane, g, o) == at) sum += grad;
          } else {
            sum += grad / static_cast<float>(window_divisor(g, o, include_pad));
          }
        }
      }
    }
    dx[i] = sum;
  }
}

template <bool Max>
cudaError_t launch_pool_grad(const float* dy, const float* x, float* dx, const PoolGeometry& geometry,
                             bool include_pad, cudaStream_t stream) {
  if (geometry.rank < 1 || geometry.rank > kDims || geometry.channels_last) return cudaErrorInvalidValue;
  const PoolGeometry g = padded_to_3d(geometry);
  const int64_t n = g.batch * g.channels * g.input[0] * g.input[1] * g.input[2];
  if (n == 0) return cudaSuccess;
  pool_grad_kernel<Max><<<blocks_for(n), kThreads, 0, stream>>>(dy, x, dx, n, g, include_pad);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_max_pool_grad(const float* dy, const float* x, float* dx, const PoolGeometry& geometry,
                                 cudaStream_t stream) {
  return launch_pool_grad<true>(dy, x, dx, geometry, false, stream);
}

cudaError_t launch_average_pool_grad(const float* dy, float* dx, const PoolGeometry& geometry, bool include_pad,
                                     cudaStream_t stream) {
  return launch_pool_grad<false>(dy, nullptr, dx, geometry, include_pad, stream);
}

}  // namespace ucudnn::cuda
