// The depthwise convolution's CUDA kernels (see depthwise_conv_kernels.h for the contract).
//
// Every kernel runs on a 2-D grid: y over output rows (int64, a grid-stride loop past 65535
// blocks), x over the items of a row (int32, one thread each). The tiled kernels compute
// kTile outputs along W a thread: per filter row, the input segment under the tile
// ((kTile - 1)·SW + S columns, zeros outside the input) and the filter row go to registers and
// the tile accumulates from them, so each input element is loaded once per filter row and tile.
#include <algorithm>
#include <cstdint>

#include "runtime/cuda/depthwise_conv_kernels.h"

namespace ucudnn::cuda {

namespace {

constexpr int kBlockThreads = 256;
constexpr int64_t kMaxGridY = 65535;
constexpr int kTile = 4;                // outputs along W a thread of a tiled kernel computes
constexpr int kChannelsPerThread = 4;   // NHWC tiled: one float4 of channels
constexpr int kMaxVecGroups = 64;       // depthwise_nhwc_vec: at most this many groups of 4 channels a block
constexpr int kVecItemsPerThread = 4;   // depthwise_nhwc_vec: the grid leaves each thread about this many items

#define UCUDNN_ROW_LOOP(row, rows)                                                        \
  for (int64_t row = int64_t{blockIdx.y} * blockDim.y + threadIdx.y; row < (rows); \
       row += int64_t{gridDim.y} * blockDim.y)

// This thread's item of a row: int64 first, so a grid a block wider than `items` cannot wrap.
__device__ __forceinline__ int64_t row_item() { return int64_t{blockIdx.x} * blockDim.x + threadIdx.x; }

// Note [fused nodes]: conv + bias + z, then the activation.
__device__ __forceinline__ float finish(float v, const DepthwiseEpilogue& e, int64_t k, int64_t at) {
  if (e.bias != nullptr) v += __ldg(e.bias + k);
  if (e.z != nullptr) v += e.z[at];
  return ir::apply_conv_activation(e.activation, v);
}

__device__ __forceinline__ void fma4(float4& acc, const float4& a, const float4& b) {
  acc.x = fmaf(a.x, b.x, acc.x);
  acc.y = fmaf(a.y, b.y, acc.y);
  acc.z = fmaf(a.z, b.z, acc.z);
  acc.w = fmaf(a.w, b.w, acc.w);
}

__device__ __forceinline__ float& component(float4& v, int i) { return (&v.x)[i]; }

// Any window, stride, dilation and multiplier: a thread an output element. NHWC rows are
// (n, oh) with items (ow, k); NCHW rows are (n, k, oh) with items ow.
template <bool ChannelsLast>
__global__ void depthwise_plain(const float* __restrict__ x, const float* __restrict__ w, float* y,
                                DepthwiseGeometry g, DepthwiseEpilogue e, int64_t rows, int items) {
  const int64_t thread_item = row_item();
  if (thread_item >= items) return;
  const int item = static_cast<int>(thread_item);
  const int64_t channels = g.channels * g.multiplier;
  UCUDNN_ROW_LOOP(row, rows) {
    int64_t n, k, oh, ow;
    if (ChannelsLast) {
      n = row / g.out_height;
      oh = row - n * g.out_height;
      ow = item / channels;
      k = item - ow * channels;
    } else {
      const int64_t nk = row / g.out_height;
      oh = row - nk * g.out_height;
      n = nk / channels;
      k = nk - n * channels;
      ow = item;
    }
    const int64_t c = k / g.multiplier;
    float sum = 0.0f;
    for (int64_t r = 0; r < g.kernel_h; ++r) {
      const int64_t ih = oh * g.stride_h - g.pad_top + r * g.dilation_h;
      if (ih < 0 || ih >= g.height) continue;
      for (int64_t s = 0; s < g.kernel_w; ++s) {
        const int64_t iw = ow * g.stride_w - g.pad_left + s * g.dilation_w;
        if (iw < 0 || iw >= g.width) continue;
        const int64_t at = ChannelsLast ? ((n * g.height + ih) * g.width + iw) * g.channels + c
                                        : ((n * g.channels + c) * g.height + ih) * g.width + iw;
        sum = fmaf(__ldg(x + at), __ldg(w + (k * g.kernel_h + r) * g.kernel_w + s), sum);
      }
    }
    const int64_t at = ChannelsLast ? ((n * g.out_height + oh) * g.out_width + ow) * channels + k
                                    : ((n * channels + k) * g.out_height + oh) * g.out_width + ow;
    y[at] = finish(sum, e, k, at);
  }
}

// NHWC, an R×S window, horizontal stride SW, horizontal dilation 1, any M and C: rows (n, oh), items
// (tile of kTile outputs along W, group of 4 output channels), the group fastest; scalar loads and
// stores, channels past K skipped. (depthwise_nhwc_vec is the kernel for M = 1, C % 4 == 0.)
template <int R, int S, int SW>
__global__ void depthwise_nhwc_tiled(const float* __restrict__ x, const float* __restrict__ w, float* y,
                                     DepthwiseGeometry g, DepthwiseEpilogue e, int64_t rows, int items) {
  constexpr int kSpan = (kTile - 1) * SW + S;
  const int64_t thread_item = row_item();
  if (thread_item >= items) return;
  const int item = static_cast<int>(thread_item);
  const int64_t channels = g.channels * g.multiplier;
  const int groups = static_cast<int>((channels + kChannelsPerThread - 1) / kChannelsPerThread);
  const int tile = item / groups;
  const int64_t k0 = int64_t{item - tile * groups} * kChannelsPerThread;
  const int64_t ow0 = int64_t{tile} * kTile;
  // Per channel of the group: its filter and its input channel (-1 past K).
  const float* filter[kChannelsPerThread];
  int64_t source[kChannelsPerThread];
#pragma unroll
  for (int i = 0; i < kChannelsPerThread; ++i) {
    const int64_t k = k0 + i;
    filter[i] = w + (k < channels ? k : 0) * (R * S);
    source[i] = k < channels ? k / g.multiplier : -1;
  }
  UCUDNN_ROW_LOOP(row, rows) {
    const int64_t n = row / g.out_height, oh = row - n * g.out_height;
    float4 acc[kTile];
#pragma unroll
    for (int t = 0; t < kTile; ++t) acc[t] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const int64_t ih = oh * g.stride_h - g.pad_top + r * g.dilation_h;
      if (ih < 0 || ih >= g.height) continue;
      float4 taps[S];
#pragma unroll
      for (int s = 0; s < S; ++s)
#pragma unroll
        for (int i = 0; i < kChannelsPerThread; ++i)
          component(taps[s], i) = source[i] >= 0 ? __ldg(filter[i] + r * S + s) : 0.0f;
      // The segment's pixels one after another: offsets, not pointers, as the first may lie before X.
      const int64_t iw0 = ow0 * SW - g.pad_left;
      int64_t pixel = ((n * g.height + ih) * g.width + iw0) * g.channels;
      float4 in[kSpan];
#pragma unroll
      for (int j = 0; j < kSpan; ++j, pixel += g.channels) {
        in[j] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        if (iw0 + j < 0 || iw0 + j >= g.width) continue;
#pragma unroll
        for (int i = 0; i < kChannelsPerThread; ++i)
          if (source[i] >= 0) component(in[j], i) = __ldg(x + pixel + source[i]);
      }
#pragma unroll
      for (int t = 0; t < kTile; ++t)
#pragma unroll
        for (int s = 0; s < S; ++s) fma4(acc[t], taps[s], in[t * SW + s]);
    }
#pragma unroll
    for (int t = 0; t < kTile; ++t) {
      const int64_t ow = ow0 + t;
      if (ow >= g.out_width) break;
      const int64_t at = ((n * g.out_height + oh) * g.out_width + ow) * channels + k0;
#pragma unroll
      for (int i = 0; i < kChannelsPerThread; ++i)
        if (source[i] >= 0) y[at + i] = finish(component(acc[t], i), e, k0 + i, at + i);
    }
  }
}

// NHWC with M = 1, C % 4 == 0 and x, y, z 16-byte aligned; an R×S window, horizontal stride SW,
// horizontal dilation 1. Block (G, kBlockThreads / G): x over G ≤ kMaxVecGroups groups of 4 channels
// (blockIdx.x picks which: the channels are cut into equal blocks, so few lanes idle even for 16 or
// 144 channels), y over items (n, oh, tile of kTile outputs along W), a grid-stride loop.
// The block's filters are staged once in shared memory, tap-major, so a thread reads its four
// channels' tap as one float4 (the filter [K, R, S] read per thread was 4·R·S scalar loads, each
// warp's scattered over 32 lines); inputs and outputs are float4 loads and stores.
template <int R, int S, int SW>
__global__ void depthwise_nhwc_vec(const float* __restrict__ x, const float* __restrict__ w, float* y,
                                   DepthwiseGeometry g, DepthwiseEpilogue e, int64_t items, int tiles) {
  constexpr int kSpan = (kTile - 1) * SW + S;
  __shared__ float4 taps_of[R * S * kMaxVecGroups];  // tap t of the block's group j: taps_of[t · G + j]
  const int block_channels = static_cast<int>(blockDim.x) * kChannelsPerThread;
  const int64_t channels = g.channels;
  const int64_t first_channel = int64_t{blockIdx.x} * block_channels;
  float* staged = reinterpret_cast<float*>(taps_of);
  for (int f = threadIdx.y * blockDim.x + threadIdx.x; f < R * S * block_channels; f += blockDim.x * blockDim.y) {
    const int tap = f / block_channels, c = f - tap * block_channels;
    const int64_t k = first_channel + c;
    staged[f] = k < channels ? __ldg(w + k * (R * S) + tap) : 0.0f;
  }
  __syncthreads();
  const int64_t k0 = first_channel + int64_t{threadIdx.x} * kChannelsPerThread;
  if (k0 >= channels) return;
  for (int64_t item = int64_t{blockIdx.y} * blockDim.y + threadIdx.y; item < items;
       item += int64_t{gridDim.y} * blockDim.y) {
    const int64_t row = item / tiles, ow0 = (item - row * tiles) * kTile;
    const int64_t n = row / g.out_height, oh = row - n * g.out_height;
    float4 acc[kTile];
#pragma unroll
    for (int t = 0; t < kTile; ++t) acc[t] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const int64_t ih = oh * g.stride_h - g.pad_top + r * g.dilation_h;
      if (ih < 0 || ih >= g.height) continue;
      const int64_t iw0 = ow0 * SW - g.pad_left;
      int64_t pixel = ((n * g.height + ih) * g.width + iw0) * channels + k0;
      float4 in[kSpan];
#pragma unroll
      for (int j = 0; j < kSpan; ++j, pixel += channels)
        in[j] = iw0 + j < 0 || iw0 + j >= g.width ? make_float4(0.0f, 0.0f, 0.0f, 0.0f)
                                                  : __ldg(reinterpret_cast<const float4*>(x + pixel));
#pragma unroll
      for (int s = 0; s < S; ++s) {
        const float4 tap = taps_of[(r * S + s) * blockDim.x + threadIdx.x];
#pragma unroll
        for (int t = 0; t < kTile; ++t) fma4(acc[t], tap, in[t * SW + s]);
      }
    }
#pragma unroll
    for (int t = 0; t < kTile; ++t) {
      const int64_t ow = ow0 + t;
      if (ow >= g.out_width) break;
      const int64_t at = ((n * g.out_height + oh) * g.out_width + ow) * channels + k0;
      float4 v = acc[t];
      float4 z = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      if (e.z != nullptr) z = *reinterpret_cast<const float4*>(e.z + at);
#pragma unroll
      for (int i = 0; i < kChannelsPerThread; ++i) {
        float& c = component(v, i);
        if (e.bias != nullptr) c += __ldg(e.bias + k0 + i);
        c += component(z, i);
        c = ir::apply_conv_activation(e.activation, c);
      }
      *reinterpret_cast<float4*>(y + at) = v;
    }
  }
}

// NCHW, an R×S window, horizontal stride SW, horizontal dilation 1: rows (n, k, oh), items
// tiles of kTile outputs along W.
template <int R, int S, int SW>
__global__ void depthwise_nchw_tiled(const float* __restrict__ x, const float* __restrict__ w, float* y,
                                     DepthwiseGeometry g, DepthwiseEpilogue e, int64_t rows, int items) {
  constexpr int kSpan = (kTile - 1) * SW + S;
  const int64_t thread_item = row_item();
  if (thread_item >= items) return;
  const int item = static_cast<int>(thread_item);
  const int64_t channels = g.channels * g.multiplier;
  const int64_t ow0 = int64_t{item} * kTile;
  const int64_t iw0 = ow0 * SW - g.pad_left;
  UCUDNN_ROW_LOOP(row, rows) {
    const int64_t nk = row / g.out_height, oh = row - nk * g.out_height;
    const int64_t n = nk / channels, k = nk - n * channels;
    const float* plane = x + (n * g.channels + k / g.multiplier) * g.height * g.width;
    const float* filter = w + k * (R * S);
    float acc[kTile] = {};
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const int64_t ih = oh * g.stride_h - g.pad_top + r * g.dilation_h;
      if (ih < 0 || ih >= g.height) continue;
      const float* x_row = plane + ih * g.width;
      float in[kSpan];
#pragma unroll
      for (int j = 0; j < kSpan; ++j) {
        const int64_t iw = iw0 + j;
        in[j] = iw >= 0 && iw < g.width ? __ldg(x_row + iw) : 0.0f;
      }
#pragma unroll
      for (int s = 0; s < S; ++s) {
        const float tap = __ldg(filter + r * S + s);
#pragma unroll
        for (int t = 0; t < kTile; ++t) acc[t] = fmaf(tap, in[t * SW + s], acc[t]);
      }
    }
    const int64_t y_row = (nk * g.out_height + oh) * g.out_width;
#pragma unroll
    for (int t = 0; t < kTile; ++t) {
      const int64_t ow = ow0 + t;
      if (ow >= g.out_width) break;
      y[y_row + ow] = finish(acc[t], e, k, y_row + ow);
    }
  }
}

struct RowGrid {
  dim3 grid, block;
};

// Blocks of kBlockThreads threads: x as wide as the items of a row need (whole warps, at most
// kBlockThreads), y the rows that leave; the grid's y at most kMaxGridY (the kernels loop).
RowGrid row_grid(int64_t rows, int64_t items) {
  const int64_t width = std::min<int64_t>(kBlockThreads, (items + 31) / 32 * 32);
  const int64_t height = kBlockThreads / width;
  RowGrid g;
  g.block = dim3(static_cast<unsigned>(width), static_cast<unsigned>(height));
  g.grid = dim3(static_cast<unsigned>((items + width - 1) / width),
                static_cast<unsigned>(std::min(kMaxGridY, (rows + height - 1) / height)));
  return g;
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

template <int R, int S, int SW>
void launch_tiled(const float* x, const float* w, float* y, const DepthwiseGeometry& g, const DepthwiseEpilogue& e,
                  cudaStream_t stream) {
  const int64_t channels = g.channels * g.multiplier;
  if (g.channels_last) {
    const int64_t rows = g.batch * g.out_height;
    const int64_t items = ceil_div(g.out_width, kTile) * ceil_div(channels, kChannelsPerThread);
    const bool vec = g.multiplier == 1 && g.channels % 4 == 0 && aligned16(x) && aligned16(y) &&
                     (e.z == nullptr || aligned16(e.z));
    if (vec) {
      const int64_t tiles = ceil_div(g.out_width, kTile), vec_items = rows * tiles;
      const int64_t groups = channels / kChannelsPerThread, blocks_x = ceil_div(groups, kMaxVecGroups);
      const int64_t width = ceil_div(groups, blocks_x), height = std::max<int64_t>(1, kBlockThreads / width);
      const dim3 block(static_cast<unsigned>(width), static_cast<unsigned>(height));
      const dim3 grid(static_cast<unsigned>(blocks_x),
                      static_cast<unsigned>(std::min(kMaxGridY, ceil_div(vec_items, height * kVecItemsPerThread))));
      depthwise_nhwc_vec<R, S, SW><<<grid, block, 0, stream>>>(x, w, y, g, e, vec_items, static_cast<int>(tiles));
      return;
    }
    const RowGrid shape = row_grid(rows, items);
    depthwise_nhwc_tiled<R, S, SW><<<shape.grid, shape.block, 0, stream>>>(x, w, y, g, e, rows, static_cast<int>(items));
    return;
  }
  const int64_t rows = g.batch * channels * g.out_height;
  const int64_t items = ceil_div(g.out_width, kTile);
  const RowGrid shape = row_grid(rows, items);
  depthwise_nchw_tiled<R, S, SW><<<shape.grid, shape.block, 0, stream>>>(x, w, y, g, e, rows, static_cast<int>(items));
}

template <int K>
void launch_square(const float* x, const float* w, float* y, const DepthwiseGeometry& g, const DepthwiseEpilogue& e,
                   cudaStream_t stream) {
  if (g.stride_w == 1)
    launch_tiled<K, K, 1>(x, w, y, g, e, stream);
  else
    launch_tiled<K, K, 2>(x, w, y, g, e, stream);
}

}  // namespace

int64_t depthwise_row_items(const DepthwiseGeometry& g) {
  return g.channels_last ? g.out_width * g.channels * g.multiplier : g.out_width;
}

cudaError_t launch_depthwise_conv(const float* x, const float* w, float* y, const DepthwiseGeometry& g,
                                  const DepthwiseEpilogue& epilogue, cudaStream_t stream) {
  const int64_t channels = g.channels * g.multiplier;
  if (g.batch <= 0 || channels <= 0 || g.out_height <= 0 || g.out_width <= 0) return cudaSuccess;
  const bool tiled = g.kernel_h == g.kernel_w && (g.kernel_h == 3 || g.kernel_h == 5) && g.dilation_w == 1 &&
                     (g.stride_w == 1 || g.stride_w == 2);
  if (tiled && g.kernel_h == 3) {
    launch_square<3>(x, w, y, g, epilogue, stream);
  } else if (tiled) {
    launch_square<5>(x, w, y, g, epilogue, stream);
  } else {
    const int64_t rows = g.batch * g.out_height * (g.channels_last ? 1 : channels);
    const int64_t items = depthwise_row_items(g);
    const RowGrid shape = row_grid(rows, items);
    const int row_items = static_cast<int>(items);
    if (g.channels_last)
      depthwise_plain<true><<<shape.grid, shape.block, 0, stream>>>(x, w, y, g, epilogue, rows, row_items);
    else
      depthwise_plain<false><<<shape.grid, shape.block, 0, stream>>>(x, w, y, g, epilogue, rows, row_items);
  }
  return cudaGetLastError();
}

}  // namespace ucudnn::cuda
