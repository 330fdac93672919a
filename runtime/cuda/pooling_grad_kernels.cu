// The backward pools' CUDA kernels (see pooling_grad_kernels.h for the contracts). Three kernels, the
// first that fits the pool runs:
//   pool_grad_tiled_kernel   1-D/2-D, no dilation, NCHW or NHWC (Note [tiled pool gradients])
//   pool_grad_kernel32       NCHW, no dilation, planes under 2^30 (3-D pools, windows too large to tile)
//   pool_grad_kernel         everything else, 64-bit (dilation, huge planes)
// A pool of fewer than 3 spatial axes runs as a 3-D one with leading unit axes. Every kernel gives
// dX[p] the dY of the windows covering p in ascending window order (pool_grad_kernel: descending),
// starting from 0.0f, so the tiled and 32-bit kernels agree bit for bit with each other and with
// runtime/cpu/pooling_grad.cc, which scatters the windows in output order.
#include <algorithm>
#include <cstdint>

#include "runtime/cuda/grid_loop.cuh"
#include "runtime/cuda/pooling_grad_kernels.h"

namespace ucudnn::cuda {

namespace {

constexpr int kDims = kMaxPoolDims;

// ---- The general kernel: any geometry, 64-bit indices -----------------------------------------

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

// The spatial position (row-major in the plane) of the tap window o's forward max picks, or -1 for a
// window with no tap inside. Spatial position `at` of the channel lies at plane[at * step].
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
    // NCHW: i = plane·in_plane + at (plane = n·C + c); NHWC: i = (n·in_plane + at)·C + c.
    int64_t at, in_base, out_base, step = 1;
    if (g.channels_last) {
      const int64_t c = i % g.channels, rest = i / g.channels, image = rest / in_plane;
      at = rest - image * in_plane;
      in_base = image * in_plane * g.channels + c;
      out_base = image * out_plane * g.channels + c;
      step = g.channels;
    } else {
      const int64_t plane = i / in_plane;
      at = i - plane * in_plane;
      in_base = plane * in_plane;
      out_base = plane * out_plane;
    }
    const int64_t p[kDims] = {at / (g.input[1] * g.input[2]), (at / g.input[2]) % g.input[1], at % g.input[2]};
    float sum = 0.0f;
    int64_t o[kDims];
    for (int64_t k0 = 0; k0 < g.kernel[0]; ++k0) {
      if ((o[0] = window_of(g, 0, p[0], k0)) < 0) continue;
      for (int64_t k1 = 0; k1 < g.kernel[1]; ++k1) {
        if ((o[1] = window_of(g, 1, p[1], k1)) < 0) continue;
        for (int64_t k2 = 0; k2 < g.kernel[2]; ++k2) {
          if ((o[2] = window_of(g, 2, p[2], k2)) < 0) continue;
          const float grad = dy[out_base + ((o[0] * g.output[1] + o[1]) * g.output[2] + o[2]) * step];
          if constexpr (Max) {
            if (window_choice(x + in_base, step, g, o) == at) sum += grad;
          } else {
            sum += grad / static_cast<float>(window_divisor(g, o, include_pad));
          }
        }
      }
    }
    dx[i] = sum;
  }
}

// ---- The 32-bit kernel: NCHW, no dilation ------------------------------------------------------

// The common case — no dilation, planes under 2^31 values — in 32-bit arithmetic, visiting only the
// windows that cover the element (their range per axis in closed form) instead of every tap of the
// kernel: what pool_grad_kernel computes, without its 64-bit divisions per tap (ResNet's 3×3/2 max
// pool at batch 256: 54 ms before, on the H200). Now the fallback of the tiled kernel.
struct Geometry32 {
  int in[kDims], out[kDims], kernel[kDims], stride[kDims], pad[kDims], pad_end[kDims];
};

__device__ __forceinline__ int max_choice32(const float* plane, const Geometry32& g, const int o[kDims]) {
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

__device__ __forceinline__ int divisor32(const Geometry32& g, const int o[kDims], bool include_pad) {
  int count = 1;
  for (int d = 0; d < kDims; ++d) {
    const int start = o[d] * g.stride[d] - g.pad[d], end = start + g.kernel[d];
    const int lo = include_pad ? -g.pad[d] : 0, hi = include_pad ? g.in[d] + g.pad_end[d] : g.in[d];
    count *= min(end, hi) - max(start, lo);
  }
  return count;
}

template <bool Max>
__global__ void pool_grad_kernel32(const float* dy, const float* x, float* dx, int64_t n, Geometry32 g,
                                   bool include_pad) {
  const int in_plane = g.in[0] * g.in[1] * g.in[2];
  const int out_plane = g.out[0] * g.out[1] * g.out[2];
  UCUDNN_GRID_LOOP(i, n) {
    const int64_t plane = i / in_plane;
    const int at = static_cast<int>(i - plane * in_plane);
    const int p[kDims] = {at / (g.in[1] * g.in[2]), (at / g.in[2]) % g.in[1], at % g.in[2]};
    int lo[kDims], hi[kDims];
    for (int d = 0; d < kDims; ++d) {  // windows o with o·s − pad <= p <= o·s − pad + K − 1
      const int first = p[d] + g.pad[d] - g.kernel[d] + 1;
      lo[d] = first <= 0 ? 0 : (first + g.stride[d] - 1) / g.stride[d];
      hi[d] = min(g.out[d] - 1, (p[d] + g.pad[d]) / g.stride[d]);
    }
    const float* dy_plane = dy + plane * out_plane;
    const float* x_plane = Max ? x + plane * in_plane : nullptr;
    float sum = 0.0f;
    int o[kDims];
    for (o[0] = lo[0]; o[0] <= hi[0]; ++o[0])
      for (o[1] = lo[1]; o[1] <= hi[1]; ++o[1])
        for (o[2] = lo[2]; o[2] <= hi[2]; ++o[2]) {
          const float grad = dy_plane[(o[0] * g.out[1] + o[1]) * g.out[2] + o[2]];
          if constexpr (Max) {
            if (max_choice32(x_plane, g, o) == at) sum += grad;
          } else {
            sum += grad / static_cast<float>(divisor32(g, o, include_pad));
          }
        }
    dx[i] = sum;
  }
}

// Whether `g` fits pool_grad_kernel32: NCHW, no dilation, every plane and padded extent under 2^30
// (so no int sum of two of them overflows).
bool fits_32_bit(const PoolGeometry& g, Geometry32* out) {
  const int64_t limit = int64_t{1} << 30;
  if (g.channels_last) return false;
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
  return true;
}

// ---- The tiled kernel: 1-D/2-D, no dilation, NCHW or NHWC --------------------------------------
//
// Note [tiled pool gradients]: the per-element kernels above recompute, for every dX element, the
// forward max of each window covering it: a 3×3/2 pool reads ~20 taps of X per dX element (2.25
// covering windows × 9 taps), each window's max found ~9 times over, with integer divisions per
// element and per window. Instead a block takes a tile of dX — tile_c channels × h.tile rows ×
// w.tile columns of one image — and
//   1. for every window covering some element of the tile (a range per axis, below), reads dY and,
//      for MaxPoolGrad, finds the window's forward max once (window_choice's predicate, taps in
//      row-major order), into a shared-memory slot: the gradient (dY, or for AveragePoolGrad
//      dY / divisor, divisor32's division) and the chosen tap's spatial position (-1 for none);
//   2. after a barrier, each thread sums for its dX elements the slots of the covering windows in
//      ascending order (rows, then columns) whose choice is that element — pool_grad_kernel32's
//      values in its order, so its results bit for bit.
// In step 2 a thread keeps one (channel, column) of the tile and walks rows, so the column's window
// range is worked out once a tile and a row's once a row. Consecutive threads take consecutive
// columns (NCHW) or channels (NHWC): coalesced dX writes, and dY and X reads in step 1.
// Per dX element, for a 3×3/2 pool: X read (K/S)² = 2.25 times, from L1/L2 (DRAM about once, plus
// the halo rows of a tile's windows), dY 1/S² = 0.25 times, (K/S)² = 2.25 shared loads, one write.
// The common windows (3×3/2, 2×2/2, 3×3/1 on both axes) get compile-time K and S: unrolled taps and
// shifts. Index math is 32-bit; divisions by a runtime value use FastDivider.
//
// Covering windows along one axis (stride S, kernel K, begin pad P, dilation 1, `out` windows):
// window o has taps at o·S − P + k, k ∈ [0, K), so it covers position p iff
//   o·S − P <= p <= o·S − P + K − 1   ⇔   p + P − K + 1 <= o·S <= p + P,
// i.e. o ∈ [o_lo, o_hi] with o_lo = max(0, ceil((p + P − K + 1) / S)) and
// o_hi = min(out − 1, floor((p + P) / S)) (p + P >= 0). The range is empty where o_lo > o_hi (a
// position between windows when S > K, or past the last window). A window reaching past the end
// padding (ceil_mode) needs nothing special: o_hi stops at the last window, and the max skips taps
// outside [0, in). Both ends grow with p, so the windows covering positions [p0, p1] are
// [o_lo(p0), o_hi(p1)]: at most floor((p1 − p0 + K − 1) / S) + 1 of them (the multiples of S in an
// interval of length p1 − p0 + K − 1), and at most out; a single position has at most
// floor((K − 1) / S) + 1.

// n / divisor for 0 <= n < 2^31, 1 <= divisor < 2^31, by a multiply and a shift (Granlund–Montgomery,
// as PyTorch's IntDivider): magic = floor(2^32·(2^shift − d) / d) + 1 with 2^(shift−1) < d <= 2^shift;
// then n / d = (umulhi(n, magic) + n) >> shift, the sum under 2^32.
struct FastDivider {
  uint32_t divisor = 1, magic = 1, shift = 0;
  FastDivider() = default;
  explicit FastDivider(uint32_t d) : divisor(d) {
    while (shift < 32 && (uint32_t{1} << shift) < d) ++shift;
    magic = static_cast<uint32_t>(((uint64_t{1} << 32) * ((uint64_t{1} << shift) - d)) / d + 1);
  }
  __device__ __forceinline__ int div(int n) const {
    return static_cast<int>((__umulhi(static_cast<uint32_t>(n), magic) + static_cast<uint32_t>(n)) >> shift);
  }
};

// One spatial axis of the tiled kernel, and its part of the tile.
struct TileAxis {
  int in = 1, out = 1, kernel = 1, pad = 0, pad_end = 0;
  FastDivider stride;
  int tile = 1;     // dX positions a tile covers
  int windows = 1;  // window slots a tile needs: at least o_hi(p1) − o_lo(p0) + 1 for every tile
  int tiles = 1;    // ceil(in / tile)
};

// An axis's arithmetic with kernel K and stride S known at compile time, or read from the axis
// where they are 0 (Note [tiled pool gradients] for the window range).
template <int K, int S>
struct AxisMath {
  __device__ static __forceinline__ int kernel(const TileAxis& a) { return K > 0 ? K : a.kernel; }
  __device__ static __forceinline__ int stride(const TileAxis& a) {
    return S > 0 ? S : static_cast<int>(a.stride.divisor);
  }
  __device__ static __forceinline__ int divide(const TileAxis& a, int n) {  // n >= 0
    return S > 0 ? static_cast<int>(static_cast<uint32_t>(n) / S) : a.stride.div(n);
  }
  __device__ static __forceinline__ int first_window(const TileAxis& a, int p) {
    const int first = p + a.pad - kernel(a) + 1;
    return first <= 0 ? 0 : divide(a, first + stride(a) - 1);
  }
  __device__ static __forceinline__ int last_window(const TileAxis& a, int p) {
    return min(a.out - 1, divide(a, p + a.pad));
  }
  // Calls visit(o) for o = lo..hi ascending: the windows covering a position, at most
  // floor((K − 1) / S) + 1 of them.
  template <typename Visit>
  __device__ static __forceinline__ void for_windows(int lo, int hi, Visit visit) {
    if constexpr (K > 0) {
      constexpr int cover = (K - 1) / S + 1;
#pragma unroll
      for (int j = 0; j < cover; ++j)
        if (lo + j <= hi) visit(lo + j);
    } else {
      for (int o = lo; o <= hi; ++o) visit(o);
    }
  }
};

struct TileGeometry {
  TileAxis h, w;        // rows and columns (a 1-D pool's rows are one unit axis)
  int channels = 1;     // C
  int tile_c = 1;       // channels a tile covers
  int64_t tiles_c = 1;  // ceil(C / tile_c)
  int64_t tiles = 0;    // N · tiles_c · h.tiles · w.tiles
  int64_t in_image = 0, out_image = 0;  // values of one image of X (dX) and of dY
  // Offsets inside an image: channel c, row y, column x at c·*_c + y·*_y + x·*_x.
  int in_c = 0, in_y = 0, in_x = 0, out_c = 0, out_y = 0, out_x = 0;
  // Step 2: thread t < lanes·row_groups takes lane f = t % lanes — a (channel, column) of the tile,
  // the channel fastest in NHWC and the column in NCHW — and rows t / lanes + i·row_groups.
  int lanes = 1, row_groups = 1;
  FastDivider by_lanes, by_lane_minor;  // t → (row group, lane); lane → (column, channel) or (channel, column)
  // Step 1: slot s of tile_c · h.windows · w.windows, split as a lane: by tile_c (NHWC) or by
  // h.windows·w.windows (NCHW), then by w.windows.
  int slots = 0;
  FastDivider by_tile_c, by_windows_w, by_windows_hw;
};

// Slot index s split into channel c, window row wy and window column wx (tile-relative).
template <bool ChannelsLast>
__device__ __forceinline__ void split_slot(const TileGeometry& g, int s, int* c, int* wy, int* wx) {
  int window;
  if constexpr (ChannelsLast) {
    window = g.by_tile_c.div(s);
    *c = s - window * g.tile_c;
  } else {
    *c = g.by_windows_hw.div(s);
    window = s - *c * static_cast<int>(g.by_windows_hw.divisor);
  }
  *wy = g.by_windows_w.div(window);
  *wx = window - *wy * g.w.windows;
}

template <bool Max, bool ChannelsLast, int K, int S>
__global__ void __launch_bounds__(kThreads)
    pool_grad_tiled_kernel(const float* __restrict__ dy, const float* __restrict__ x, float* __restrict__ dx,
                           TileGeometry g, bool include_pad) {
  using Axis = AxisMath<K, S>;
  // Max: (gradient, choice) pairs; average: gradients.
  extern __shared__ float2 shared[];
  float2* pairs = shared;
  float* grads = reinterpret_cast<float*>(shared);
  // Slot of (channel c, window row wy, window column wx), as split_slot reads it.
  const int slot_c = ChannelsLast ? 1 : g.h.windows * g.w.windows;
  const int slot_w = ChannelsLast ? g.tile_c : 1;
  const int slot_row = g.w.windows * slot_w;
  // This thread's lane (channel, column) and first row in step 2.
  const int group = g.by_lanes.div(threadIdx.x), lane = threadIdx.x - group * g.lanes;
  int lane_c, lane_col;
  if constexpr (ChannelsLast) {
    lane_col = g.by_lane_minor.div(lane);
    lane_c = lane - lane_col * g.tile_c;
  } else {
    lane_c = g.by_lane_minor.div(lane);
    lane_col = lane - lane_c * g.w.tile;
  }
  for (int64_t tile = blockIdx.x; tile < g.tiles; tile += gridDim.x) {
    // Tiles in the order columns, rows, channel groups, images: neighbours share halo rows in L2.
    int64_t rest = tile;
    const int tile_x = static_cast<int>(rest % g.w.tiles);
    rest /= g.w.tiles;
    const int tile_y = static_cast<int>(rest % g.h.tiles);
    rest /= g.h.tiles;
    const int tile_c = static_cast<int>(rest % g.tiles_c);
    const int64_t image = rest / g.tiles_c;
    const int c0 = tile_c * g.tile_c, y0 = tile_y * g.h.tile, x0 = tile_x * g.w.tile;
    const int c_count = min(g.tile_c, g.channels - c0);
    const int y_count = min(g.h.tile, g.h.in - y0), x_count = min(g.w.tile, g.w.in - x0);
    const int oy0 = Axis::first_window(g.h, y0), oy_count = Axis::last_window(g.h, y0 + y_count - 1) - oy0 + 1;
    const int ox0 = Axis::first_window(g.w, x0), ox_count = Axis::last_window(g.w, x0 + x_count - 1) - ox0 + 1;
    const float* dy_tile = dy + image * g.out_image + c0 * g.out_c;
    float* dx_tile = dx + image * g.in_image + c0 * g.in_c;

    // 1. Each covering window's gradient (and forward choice) into its slot.
    for (int s = threadIdx.x; s < g.slots; s += kThreads) {
      int c, wy, wx;
      split_slot<ChannelsLast>(g, s, &c, &wy, &wx);
      if (c >= c_count || wy >= oy_count || wx >= ox_count) continue;
      const int oy = oy0 + wy, ox = ox0 + wx;
      const float grad = dy_tile[c * g.out_c + oy * g.out_y + ox * g.out_x];
      const int start_y = oy * Axis::stride(g.h) - g.h.pad, start_x = ox * Axis::stride(g.w) - g.w.pad;
      if constexpr (Max) {
        const float* x_channel = x + image * g.in_image + (c0 + c) * g.in_c;
        int chosen = -1;
        float best = 0.0f;
#pragma unroll
        for (int ky = 0; ky < Axis::kernel(g.h); ++ky) {
          const int iy = start_y + ky;
          if (iy < 0 || iy >= g.h.in) continue;
#pragma unroll
          for (int kx = 0; kx < Axis::kernel(g.w); ++kx) {
            const int ix = start_x + kx;
            if (ix < 0 || ix >= g.w.in) continue;
            const float v = x_channel[iy * g.in_y + ix * g.in_x];
            if (chosen < 0 || v > best || isnan(v)) {
              chosen = iy * g.w.in + ix;
              best = v;
            }
          }
        }
        pairs[s] = make_float2(grad, __int_as_float(chosen));
      } else {
        const int lo_y = include_pad ? -g.h.pad : 0, hi_y = include_pad ? g.h.in + g.h.pad_end : g.h.in;
        const int lo_x = include_pad ? -g.w.pad : 0, hi_x = include_pad ? g.w.in + g.w.pad_end : g.w.in;
        // divisor32's count (its leading unit axis counts 1).
        const int count = (min(start_y + Axis::kernel(g.h), hi_y) - max(start_y, lo_y)) *
                          (min(start_x + Axis::kernel(g.w), hi_x) - max(start_x, lo_x));
        grads[s] = grad / static_cast<float>(count);
      }
    }
    __syncthreads();

    // 2. This thread's dX elements: the lane's (channel, column), rows group, group + row_groups, ...
    if (group < g.row_groups && lane_c < c_count && lane_col < x_count) {
      const int px = x0 + lane_col;
      const int ox_lo = Axis::first_window(g.w, px) - ox0, ox_hi = Axis::last_window(g.w, px) - ox0;
      const int lane_slot = lane_c * slot_c;
      float* dx_lane = dx_tile + lane_c * g.in_c + px * g.in_x;
      for (int row = group; row < y_count; row += g.row_groups) {
        const int py = y0 + row;
        const int oy_lo = Axis::first_window(g.h, py) - oy0, oy_hi = Axis::last_window(g.h, py) - oy0;
        const int at = py * g.w.in + px;
        float sum = 0.0f;
        Axis::for_windows(oy_lo, oy_hi, [&](int wy) {
          const int row_slot = lane_slot + wy * slot_row;
          Axis::for_windows(ox_lo, ox_hi, [&](int wx) {
            if constexpr (Max) {
              const float2 pair = pairs[row_slot + wx * slot_w];
              if (__float_as_int(pair.y) == at) sum += pair.x;
            } else {
              sum += grads[row_slot + wx * slot_w];
            }
          });
        });
        dx_lane[py * g.in_y] = sum;
      }
    }
    __syncthreads();  // before the next tile's step 1 overwrites the slots
  }
}

constexpr int kRowsPerThread = 8;           // dX elements a thread aims at in step 2
constexpr int kTileSharedBytes = 24 << 10;  // 8 blocks of 256 threads an SM still fit in shared memory

// ceil(n / parts) for the part count that splits n into pieces of at most `most`: equal tiles.
int balanced_tile(int n, int most) {
  const int parts = (n + most - 1) / most;
  return (n + parts - 1) / parts;
}

// Window slots a tile of `tile` positions needs along `a` (Note [tiled pool gradients]).
int tile_windows(const TileAxis& a, int tile) {
  const int64_t covering = (int64_t{tile} + a.kernel - 2) / a.stride.divisor + 1;
  return static_cast<int>(covering < a.out ? covering : a.out);
}

// The tile's lanes (tile_c × w.tile, at most kThreads) and rows: NHWC up to 32 channels (a warp's
// coalesced 128 bytes) × the columns that fill the block; NCHW the columns (equal tiles of at most
// kThreads), and channels too where the plane is too short to give each thread kRowsPerThread rows.
void choose_tile(const PoolGeometry& g, TileGeometry* t) {
  const int channels = static_cast<int>(g.channels), height = t->h.in, width = t->w.in;
  int tile_c = 1, tile_w = 1;
  if (g.channels_last) {
    tile_c = balanced_tile(channels, 32);
    tile_w = balanced_tile(width, std::max(1, kThreads / tile_c));
  } else {
    // The fewest column tiles whose lanes leave at most a quarter of the threads idle.
    for (int parts = (width + kThreads - 1) / kThreads;; ++parts) {
      tile_w = (width + parts - 1) / parts;
      if (tile_w <= kThreads / 8 || kThreads / tile_w * tile_w * 4 >= 3 * kThreads) break;
    }
    const int groups = kThreads / tile_w;
    if (height < kRowsPerThread * groups) tile_c = std::min(channels, groups);
  }
  const int row_groups = kThreads / (tile_c * tile_w);
  t->tile_c = tile_c;
  t->w.tile = tile_w;
  t->h.tile = balanced_tile(height, kRowsPerThread * row_groups);
}

// Whether `g` (3-D, as pool_geometry_as_3d gives it, of `rank` axes before) fits
// pool_grad_tiled_kernel, and its tiling. `max` adds the choices to the shared memory a tile needs.
bool plan_tiles(const PoolGeometry& g, int rank, bool max, TileGeometry* t) {
  const int64_t limit = int64_t{1} << 30;
  if (rank > 2 || g.channels >= limit) return false;
  const int64_t in_image = g.channels * g.input[1] * g.input[2];
  const int64_t out_image = g.channels * g.output[1] * g.output[2];
  if (in_image >= limit || out_image >= limit) return false;
  TileAxis* axes[2] = {&t->h, &t->w};
  for (int d = 1; d < kDims; ++d) {
    if (g.dilation[d] != 1 || g.input[d] + g.pad_begin[d] + g.pad_end[d] + g.kernel[d] + g.stride[d] >= limit)
      return false;
    TileAxis& a = *axes[d - 1];
    a.in = static_cast<int>(g.input[d]);
    a.out = static_cast<int>(g.output[d]);
    a.kernel = static_cast<int>(g.kernel[d]);
    a.pad = static_cast<int>(g.pad_begin[d]);
    a.pad_end = static_cast<int>(g.pad_end[d]);
    a.stride = FastDivider(static_cast<uint32_t>(g.stride[d]));
  }
  choose_tile(g, t);
  // Shrink the tile (rows, then channels, then columns) until its window slots fit shared memory.
  const int slot_bytes = max ? 8 : 4;
  for (;;) {
    t->h.windows = tile_windows(t->h, t->h.tile);
    t->w.windows = tile_windows(t->w, t->w.tile);
    if (int64_t{t->tile_c} * t->h.windows * t->w.windows * slot_bytes <= kTileSharedBytes) break;
    if (t->h.tile > 1) {
      t->h.tile = (t->h.tile + 1) / 2;
    } else if (t->tile_c > 1) {
      t->tile_c = (t->tile_c + 1) / 2;
    } else if (t->w.tile > 1) {
      t->w.tile = (t->w.tile + 1) / 2;
    } else {
      return false;  // one position's windows overflow: pool_grad_kernel32 or pool_grad_kernel
    }
  }
  const int channels = static_cast<int>(g.channels);
  t->h.tiles = (t->h.in + t->h.tile - 1) / t->h.tile;
  t->w.tiles = (t->w.in + t->w.tile - 1) / t->w.tile;
  t->channels = channels;
  t->tiles_c = (channels + t->tile_c - 1) / t->tile_c;
  t->tiles = g.batch * t->tiles_c * t->h.tiles * t->w.tiles;
  t->in_image = in_image;
  t->out_image = out_image;
  if (g.channels_last) {
    t->in_c = t->out_c = 1;
    t->in_x = t->out_x = channels;
    t->in_y = t->w.in * channels;
    t->out_y = t->w.out * channels;
  } else {
    t->in_c = t->h.in * t->w.in;
    t->out_c = t->h.out * t->w.out;
    t->in_y = t->w.in;
    t->out_y = t->w.out;
    t->in_x = t->out_x = 1;
  }
  t->lanes = t->tile_c * t->w.tile;
  t->row_groups = kThreads / t->lanes;
  t->by_lanes = FastDivider(static_cast<uint32_t>(t->lanes));
  t->by_lane_minor = FastDivider(static_cast<uint32_t>(g.channels_last ? t->tile_c : t->w.tile));
  t->slots = t->tile_c * t->h.windows * t->w.windows;
  t->by_tile_c = FastDivider(static_cast<uint32_t>(t->tile_c));
  t->by_windows_w = FastDivider(static_cast<uint32_t>(t->w.windows));
  t->by_windows_hw = FastDivider(static_cast<uint32_t>(t->h.windows * t->w.windows));
  return true;
}

template <bool Max, int K, int S>
void launch_tiled_for(const float* dy, const float* x, float* dx, const TileGeometry& t, bool channels_last,
                      bool include_pad, cudaStream_t stream) {
  const unsigned blocks = static_cast<unsigned>(std::min<int64_t>(t.tiles, int64_t{1} << 20));
  const size_t shared = static_cast<size_t>(t.slots) * (Max ? 8 : 4);
  if (channels_last)
    pool_grad_tiled_kernel<Max, true, K, S><<<blocks, kThreads, shared, stream>>>(dy, x, dx, t, include_pad);
  else
    pool_grad_tiled_kernel<Max, false, K, S><<<blocks, kThreads, shared, stream>>>(dy, x, dx, t, include_pad);
}

// The tiled kernel, specialised where both axes have CNNs' usual window (3×3/2, 2×2/2, 3×3/1).
template <bool Max>
cudaError_t launch_tiled(const float* dy, const float* x, float* dx, const TileGeometry& t, bool channels_last,
                         bool include_pad, cudaStream_t stream) {
  const auto is = [&t](int kernel, int stride) {
    return t.h.kernel == kernel && t.w.kernel == kernel && static_cast<int>(t.h.stride.divisor) == stride &&
           static_cast<int>(t.w.stride.divisor) == stride;
  };
  if (is(3, 2))
    launch_tiled_for<Max, 3, 2>(dy, x, dx, t, channels_last, include_pad, stream);
  else if (is(2, 2))
    launch_tiled_for<Max, 2, 2>(dy, x, dx, t, channels_last, include_pad, stream);
  else if (is(3, 1))
    launch_tiled_for<Max, 3, 1>(dy, x, dx, t, channels_last, include_pad, stream);
  else
    launch_tiled_for<Max, 0, 0>(dy, x, dx, t, channels_last, include_pad, stream);
  return cudaGetLastError();
}

template <bool Max>
cudaError_t launch_pool_grad(const float* dy, const float* x, float* dx, const PoolGeometry& geometry,
                             bool include_pad, cudaStream_t stream) {
  if (geometry.rank < 1 || geometry.rank > kDims || (geometry.channels_last && geometry.rank != 2))
    return cudaErrorInvalidValue;
  const PoolGeometry g = pool_geometry_as_3d(geometry);
  const int64_t n = g.batch * g.channels * g.input[0] * g.input[1] * g.input[2];
  if (n == 0) return cudaSuccess;
  TileGeometry tiles;
  if (plan_tiles(g, geometry.rank, Max, &tiles))
    return launch_tiled<Max>(dy, x, dx, tiles, g.channels_last, include_pad, stream);
  Geometry32 g32;
  if (fits_32_bit(g, &g32))
    pool_grad_kernel32<Max><<<blocks_for(n), kThreads, 0, stream>>>(dy, x, dx, n, g32, include_pad);
  else
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
