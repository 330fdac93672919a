// The backward pools' CUDA kernels (see pooling_grad_kernels.h for the contracts). A pool of fewer
// than 3 spatial axes runs as a 3-D one with leading unit axes; grid-stride loops over dX.
// Both layouts: a (batch, channel) plane's values sit 1 apart in NCHW and `channels` apart in NHWC, so
// the kernels read plane[at · step] from the plane's first value (Plane).
#include <cstdint>

#include "runtime/cuda/grid_loop.cuh"
#include "runtime/cuda/pooling_grad_kernels.h"

namespace ucudnn::cuda {

namespace {

constexpr int kDims = kMaxPoolDims;

// Where dX element i's plane starts in X (and dX) and in dY, its position `at` in the plane and the
// step between a plane's neighbours: NCHW planes are contiguous, NHWC ones interleave the channels.
struct Plane {
  int64_t x_base, y_base, at, step;
};
// Index: int64_t, or uint32_t where the tensor allows (its divisions cost far less).
template <typename Index>
__device__ __forceinline__ Plane plane_of(Index i, Index in_plane, Index out_plane, Index channels,
                                          bool channels_last) {
  if (!channels_last) {
    const Index plane = i / in_plane;
    return {int64_t{plane} * in_plane, int64_t{plane} * out_plane, int64_t{i - plane * in_plane}, 1};
  }
  const Index c = i % channels, pixel = i / channels, n = pixel / in_plane;
  return {int64_t{n} * in_plane * channels + c, int64_t{n} * out_plane * channels + c, int64_t{pixel - n * in_plane},
          int64_t{channels}};
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
__device__ int64_t window_choice(const float* plane, int64_t step, const PoolGeometry& g, const int64_t o[kDims]) {
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
        const float v = plane[at * step];
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
    const Plane pl = plane_of<int64_t>(i, in_plane, out_plane, g.channels, g.channels_last);
    const int64_t at = pl.at;
    const int64_t p[kDims] = {at / (g.input[1] * g.input[2]), (at / g.input[2]) % g.input[1], at % g.input[2]};
    const float* dy_plane = dy + pl.y_base;
    float sum = 0.0f;
    int64_t o[kDims];
    for (int64_t k0 = 0; k0 < g.kernel[0]; ++k0) {
      if ((o[0] = window_of(g, 0, p[0], k0)) < 0) continue;
      for (int64_t k1 = 0; k1 < g.kernel[1]; ++k1) {
        if ((o[1] = window_of(g, 1, p[1], k1)) < 0) continue;
        for (int64_t k2 = 0; k2 < g.kernel[2]; ++k2) {
          if ((o[2] = window_of(g, 2, p[2], k2)) < 0) continue;
          const float grad = dy_plane[((o[0] * g.output[1] + o[1]) * g.output[2] + o[2]) * pl.step];
          if constexpr (Max) {
            if (window_choice(x + pl.x_base, pl.step, g, o) == at) sum += grad;
          } else {
            sum += grad / static_cast<float>(window_divisor(g, o, include_pad));
          }
        }
      }
    }
    dx[i] = sum;
  }
}

// The common case — no dilation, planes under 2^31 values — in 32-bit arithmetic, visiting only the
// windows that cover the element (their range per axis in closed form) instead of every tap of the
// kernel: what pool_grad_kernel computes, without its 64-bit divisions per tap (ResNet's 3×3/2 max
// pool at batch 256: 54 ms before, on the H200).
struct Geometry32 {
  int in[kDims], out[kDims], kernel[kDims], stride[kDims], pad[kDims], pad_end[kDims];
  int64_t channels;
  bool channels_last;
};

__device__ __forceinline__ int max_choice32(const float* plane, int64_t step, const Geometry32& g, const int o[kDims]) {
  int chosen = -1;
  float best = 0.0f;
  for (int k0 = 0; k0 < g.kernel[0]; ++k0) {
    const int x0 = o[0] * g.stride[0] - g.pad[0] + k0;
    if (x0 < 0 || x0 >= g.in[0]) continue;
    for (int k1 = 0; k1 < g.kernel[1]; ++k1) {
      const int x1 = o[1] * g.stride[1] - g.pad[1] + k1;
      if (x1 < 0 || x1 >= g.in[1]) continue;
      for (int k2 = 0; k2 < g.kernel[2]; ++k2) {
        const int x2 = o[2] * g.stride[2] - g.pad[2] + k2;
        if (x2 < 0 || x2 >= g.in[2]) continue;
        const int at = (x0 * g.in[1] + x1) * g.in[2] + x2;
        const float v = plane[at * step];
        if (chosen < 0 || v > best || isnan(v)) {
          chosen = at;
          best = v;
        }
      }
    }
  }
  return chosen;
}

// The windows o covering input position p, lo[d] <= o[d] <= hi[d] per axis: o·s − pad <= p <= o·s − pad + K − 1.
__device__ __forceinline__ void covering_windows(const Geometry32& g, const int p[kDims], int lo[kDims], int hi[kDims]) {
  for (int d = 0; d < kDims; ++d) {
    const int first = p[d] + g.pad[d] - g.kernel[d] + 1;
    lo[d] = first <= 0 ? 0 : (first + g.stride[d] - 1) / g.stride[d];
    hi[d] = min(g.out[d] - 1, (p[d] + g.pad[d]) / g.stride[d]);
  }
}

__device__ __forceinline__ int divisor32(const Geometry32& g, const int o[kDims], bool include_pad) {
  int count = 1;
  for (int d = 0; d < kDims; ++d) {
    const int start = o[d] * g.stride[d] - g.pad[d], end = start + g.kernel[d];
    const int lo = include_pad ? -g.pad[d] : 0, hi = include_pad ? g.in[d] + g.pad_end[d] : g.in[d];
    count *= min(end, hi) - max(start, lo);
  }
  return count;
}

// dX element i as the 32-bit gathers see it: its plane, its position in the plane and its spatial
// coordinates, and the windows covering it.
struct Covered {
  Plane plane;
  int at;
  int p[kDims], lo[kDims], hi[kDims];
};
template <typename Index>
__device__ __forceinline__ Covered covered(Index i, Index in_plane, Index out_plane, const Geometry32& g) {
  Covered e;
  e.plane = plane_of<Index>(i, in_plane, out_plane, static_cast<Index>(g.channels), g.channels_last);
  e.at = static_cast<int>(e.plane.at);
  e.p[0] = e.at / (g.in[1] * g.in[2]);
  e.p[1] = (e.at / g.in[2]) % g.in[1];
  e.p[2] = e.at % g.in[2];
  covering_windows(g, e.p, e.lo, e.hi);
  return e;
}

template <bool Max, typename Index>
__global__ void pool_grad_kernel32(const float* dy, const float* x, float* dx, Index n, Geometry32 g,
                                   bool include_pad) {
  const Index in_plane = g.in[0] * g.in[1] * g.in[2];
  const Index out_plane = g.out[0] * g.out[1] * g.out[2];
  UCUDNN_INDEX_LOOP(Index, i, n) {
    const Covered e = covered<Index>(i, in_plane, out_plane, g);
    const Plane& pl = e.plane;
    const int at = e.at;
    const int *lo = e.lo, *hi = e.hi;
    const float* dy_plane = dy + pl.y_base;
    const float* x_plane = Max ? x + pl.x_base : nullptr;
    float sum = 0.0f;
    int o[kDims];
    for (o[0] = lo[0]; o[0] <= hi[0]; ++o[0])
      for (o[1] = lo[1]; o[1] <= hi[1]; ++o[1])
        for (o[2] = lo[2]; o[2] <= hi[2]; ++o[2]) {
          const float grad = dy_plane[((o[0] * g.out[1] + o[1]) * g.out[2] + o[2]) * pl.step];
          if constexpr (Max) {
            if (max_choice32(x_plane, pl.step, g, o) == at) sum += grad;
          } else {
            sum += grad / static_cast<float>(divisor32(g, o, include_pad));
          }
        }
    dx[i] = sum;
  }
}

// Note [max pool choices]: with a workspace, MaxPoolGrad finds each window's forward max once —
// choices[j], parallel to dY (same index in either layout), holds the window's chosen tap k (row-major
// in the window; kNoChoice when no tap lies inside X) — and the gather then compares each covering
// window's choice with the element's tap in it, instead of recomputing up to 4 window maxima per
// element (a ResNet's 3×3/2 pool). Same rule, so the same dX.
constexpr uint8_t kNoChoice = 255;

template <typename Index>
__global__ void max_choice_kernel32(const float* x, uint8_t* choices, Index outputs, Geometry32 g) {
  const Index in_plane = g.in[0] * g.in[1] * g.in[2];
  const Index out_plane = g.out[0] * g.out[1] * g.out[2];
  const Index channels = static_cast<Index>(g.channels);
  UCUDNN_INDEX_LOOP(Index, j, outputs) {
    int64_t x_base, step, at;
    if (g.channels_last) {
      const Index pixel = j / channels, n = pixel / out_plane;
      x_base = int64_t{n} * in_plane * channels + j % channels;
      step = channels;
      at = pixel - n * out_plane;
    } else {
      const Index plane = j / out_plane;
      x_base = int64_t{plane} * in_plane;
      step = 1;
      at = j - plane * out_plane;
    }
    const int a = static_cast<int>(at);
    const int o[kDims] = {a / (g.out[1] * g.out[2]), (a / g.out[2]) % g.out[1], a % g.out[2]};
    const int chosen = max_choice32(x + x_base, step, g, o);
    uint8_t tap = kNoChoice;
    if (chosen >= 0) {
      const int p[kDims] = {chosen / (g.in[1] * g.in[2]), (chosen / g.in[2]) % g.in[1], chosen % g.in[2]};
      int k = 0;
      for (int d = 0; d < kDims; ++d) k = k * g.kernel[d] + (p[d] - (o[d] * g.stride[d] - g.pad[d]));
      tap = static_cast<uint8_t>(k);
    }
    choices[j] = tap;
  }
}

template <typename Index>
__global__ void max_pool_grad_by_choice_kernel32(const float* dy, const uint8_t* choices, float* dx, Index n,
                                                 Geometry32 g) {
  const Index in_plane = g.in[0] * g.in[1] * g.in[2];
  const Index out_plane = g.out[0] * g.out[1] * g.out[2];
  UCUDNN_INDEX_LOOP(Index, i, n) {
    const Covered e = covered<Index>(i, in_plane, out_plane, g);
    const Plane& pl = e.plane;
    const int* p = e.p;
    const int *lo = e.lo, *hi = e.hi;
    float sum = 0.0f;
    int o[kDims];
    for (o[0] = lo[0]; o[0] <= hi[0]; ++o[0])
      for (o[1] = lo[1]; o[1] <= hi[1]; ++o[1])
        for (o[2] = lo[2]; o[2] <= hi[2]; ++o[2]) {
          int k = 0;
          for (int d = 0; d < kDims; ++d) k = k * g.kernel[d] + (p[d] - (o[d] * g.stride[d] - g.pad[d]));
          const int64_t j = pl.y_base + ((o[0] * g.out[1] + o[1]) * g.out[2] + o[2]) * pl.step;
          if (choices[j] == k) sum += dy[j];
        }
    dx[i] = sum;
  }
}

// Whether `g` fits pool_grad_kernel32: no dilation, every plane and padded extent under 2^30
// (so no int sum of two of them overflows).
bool fits_32_bit(const PoolGeometry& g, Geometry32* out) {
  const int64_t limit = int64_t{1} << 30;
  int64_t in_plane = 1, out_plane = 1;
  for (int d = 0; d < kDims; ++d) {
    if (g.dilation[d] != 1 || g.input[d] + g.pad_begin[d] + g.pad_end[d] + g.kernel[d] >= limit) return false;
    in_plane *= g.input[d];
    out_plane *= g.output[d];
    if (in_plane >= limit || out_plane >= limit) return false;
    out->in[d] = static_cast<int>(g.input[d]);
    out->out[d] = static_cast<int>(g.output[d]);
    out->kernel[d] = static_cast<int>(g.kernel[d]);
    out->stride[d] = static_cast<int>(g.stride[d]);
    out->pad[d] = static_cast<int>(g.pad_begin[d]);
    out->pad_end[d] = static_cast<int>(g.pad_end[d]);
  }
  out->channels = g.channels;
  out->channels_last = g.channels_last;
  return true;
}

template <bool Max>
cudaError_t launch_pool_grad(const float* dy, const float* x, float* dx, const PoolGeometry& geometry,
                             bool include_pad, uint8_t* choices, cudaStream_t stream) {
  if (geometry.rank < 1 || geometry.rank > kDims || (geometry.channels_last && geometry.rank != 2))
    return cudaErrorInvalidValue;
  const PoolGeometry g = pool_geometry_as_3d(geometry);
  const int64_t n = g.batch * g.channels * g.input[0] * g.input[1] * g.input[2];
  if (n == 0) return cudaSuccess;
  Geometry32 g32;
  const bool small = fits_uint32_loop(n);  // dX: at least as many elements as dY
  const int64_t outputs = g.batch * g.channels * g.output[0] * g.output[1] * g.output[2];
  if (Max && choices != nullptr && max_pool_choice_bytes(geometry) > 0 && fits_32_bit(g, &g32)) {
    if (small) {
      max_choice_kernel32<uint32_t><<<blocks_for(outputs), kThreads, 0, stream>>>(
          x, choices, static_cast<uint32_t>(outputs), g32);
      max_pool_grad_by_choice_kernel32<uint32_t><<<blocks_for(n), kThreads, 0, stream>>>(
          dy, choices, dx, static_cast<uint32_t>(n), g32);
    } else {
      max_choice_kernel32<int64_t><<<blocks_for(outputs), kThreads, 0, stream>>>(x, choices, outputs, g32);
      max_pool_grad_by_choice_kernel32<int64_t><<<blocks_for(n), kThreads, 0, stream>>>(dy, choices, dx, n, g32);
    }
  } else if (fits_32_bit(g, &g32)) {
    if (small)
      pool_grad_kernel32<Max, uint32_t><<<blocks_for(n), kThreads, 0, stream>>>(dy, x, dx, static_cast<uint32_t>(n),
                                                                                 g32, include_pad);
    else
      pool_grad_kernel32<Max, int64_t><<<blocks_for(n), kThreads, 0, stream>>>(dy, x, dx, n, g32, include_pad);
  } else
    pool_grad_kernel<Max><<<blocks_for(n), kThreads, 0, stream>>>(dy, x, dx, n, g, include_pad);
  return cudaGetLastError();
}

}  // namespace

size_t max_pool_choice_bytes(const PoolGeometry& geometry) {
  if (geometry.rank < 1 || geometry.rank > kDims) return 0;
  int64_t taps = 1, outputs = geometry.batch * geometry.channels;
  for (int d = 0; d < geometry.rank; ++d) {
    if (geometry.dilation[d] != 1) return 0;
    taps *= geometry.kernel[d];
    outputs *= geometry.output[d];
  }
  return taps < kNoChoice ? static_cast<size_t>(outputs) : 0;
}

cudaError_t launch_max_pool_grad(const float* dy, const float* x, float* dx, const PoolGeometry& geometry,
                                 void* workspace, cudaStream_t stream) {
  return launch_pool_grad<true>(dy, x, dx, geometry, false, static_cast<uint8_t*>(workspace), stream);
}

cudaError_t launch_average_pool_grad(const float* dy, float* dx, const PoolGeometry& geometry, bool include_pad,
                                     cudaStream_t stream) {
  return launch_pool_grad<false>(dy, nullptr, dx, geometry, include_pad, nullptr, stream);
}

}  // namespace ucudnn::cuda
