// GridSample's sampling arithmetic (grid_sample.h): plain inline functions, __host__ __device__ under nvcc,
// shared by the CPU kernel and the CUDA kernel so both backends read the same taps with the same weights.
// Light on includes so that an nvcc unit can take it. PyTorch's grid_sampler_2d is the model (ONNX's
// reference and ONNX Runtime agree with it):
//   - a grid value g in [-1, 1] maps to pixel coordinate ((g + 1) / 2)·(size - 1) with align_corners, else
//     ((g + 1)·size - 1) / 2 (-1 and 1 the outer edges of the corner pixels);
//   - padding "border" clamps a coordinate into [0, size - 1]; "reflection" reflects it about the edges
//     (the corner pixels' centres with align_corners, their outer edges without), then clamps; "zeros"
//     leaves it, and a tap outside the image reads 0;
//   - bilinear and nearest (ties to even) pad the sampled coordinate; bicubic (Keys' kernel, a = -0.75) pads
//     each of its 4×4 taps.
// A coordinate that is not finite, or too far out to index with (|c| > 2^30), reads 0 whatever the padding.
#pragma once

#include <math.h>

#include <cstdint>

#if defined(__CUDACC__)
#define UCUDNN_GRID_SAMPLE_HOST_DEVICE __host__ __device__
#else
#define UCUDNN_GRID_SAMPLE_HOST_DEVICE
#endif

namespace ucudnn {

enum class GridSampleMode : int { kBilinear, kNearest, kBicubic };
enum class GridSamplePadding : int { kZeros, kBorder, kReflection };

struct GridSampleParams {
  GridSampleMode mode = GridSampleMode::kBilinear;
  GridSamplePadding padding = GridSamplePadding::kZeros;
  bool align_corners = false;
  int64_t in_h = 1, in_w = 1, out_h = 1, out_w = 1;
};

namespace grid_sample_detail {

UCUDNN_GRID_SAMPLE_HOST_DEVICE inline float unnormalize(float g, int64_t size, bool align_corners) {
  const float s = static_cast<float>(size);
  return align_corners ? (g + 1.0f) / 2.0f * (s - 1.0f) : ((g + 1.0f) * s - 1.0f) / 2.0f;
}

UCUDNN_GRID_SAMPLE_HOST_DEVICE inline float clamp_to(float c, int64_t size) {
  const float top = static_cast<float>(size - 1);
  return c < 0.0f ? 0.0f : (c > top ? top : c);
}

// c reflected into [low / 2, high / 2] (bounds given doubled, as PyTorch's reflect_coordinates).
UCUDNN_GRID_SAMPLE_HOST_DEVICE inline float reflect(float c, float twice_low, float twice_high) {
  if (twice_low == twice_high) return 0.0f;
  const float low = twice_low / 2.0f, span = (twice_high - twice_low) / 2.0f;
  c = fabsf(c - low);
  const float extra = fmodf(c, span);
  const int64_t flips = static_cast<int64_t>(floorf(c / span));
  return flips % 2 == 0 ? extra + low : span - extra + low;
}

// The padding applied to pixel coordinate c along an axis of `size`.
UCUDNN_GRID_SAMPLE_HOST_DEVICE inline float pad(float c, int64_t size, const GridSampleParams& p) {
  if (!isfinite(c)) return c;
  if (p.padding == GridSamplePadding::kBorder) return clamp_to(c, size);
  if (p.padding == GridSamplePadding::kReflection) {
    const float s = static_cast<float>(size);
    c = p.align_corners ? reflect(c, 0.0f, 2.0f * (s - 1.0f)) : reflect(c, -1.0f, 2.0f * s - 1.0f);
    return clamp_to(c, size);
  }
  return c;
}

UCUDNN_GRID_SAMPLE_HOST_DEVICE inline bool indexable(float c) { return isfinite(c) && fabsf(c) <= 1073741824.0f; }

// plane[y, x], or 0 outside the plane.
UCUDNN_GRID_SAMPLE_HOST_DEVICE inline float tap(const float* plane, int64_t y, int64_t x, const GridSampleParams& p) {
  return y >= 0 && y < p.in_h && x >= 0 && x < p.in_w ? plane[y * p.in_w + x] : 0.0f;
}

// Keys' cubic kernel (a = -0.75) at distances 1 + t, t, 1 - t, 2 - t.
UCUDNN_GRID_SAMPLE_HOST_DEVICE inline void cubic_weights(float t, float w[4]) {
  const float a = -0.75f;
  const float d0 = 1.0f + t, d3 = 2.0f - t, u = 1.0f - t;
  w[0] = ((a * d0 - 5.0f * a) * d0 + 8.0f * a) * d0 - 4.0f * a;
  w[1] = ((a + 2.0f) * t - (a + 3.0f)) * t * t + 1.0f;
  w[2] = ((a + 2.0f) * u - (a + 3.0f)) * u * u + 1.0f;
  w[3] = ((a * d3 - 5.0f * a) * d3 + 8.0f * a) * d3 - 4.0f * a;
}

}  // namespace grid_sample_detail

// The value sampled from one [in_h, in_w] plane at grid point (gx, gy) (x along W, y along H).
UCUDNN_GRID_SAMPLE_HOST_DEVICE inline float grid_sample_at(const float* plane, float gx, float gy,
                                                           const GridSampleParams& p) {
  namespace d = grid_sample_detail;
  const float ux = d::unnormalize(gx, p.in_w, p.align_corners);
  const float uy = d::unnormalize(gy, p.in_h, p.align_corners);
  if (p.mode == GridSampleMode::kBicubic) {
    if (!d::indexable(ux) || !d::indexable(uy)) return 0.0f;
    const float x0 = floorf(ux), y0 = floorf(uy);
    float wx[4], wy[4];
    d::cubic_weights(ux - x0, wx);
    d::cubic_weights(uy - y0, wy);
    float sum = 0.0f;
    for (int j = 0; j < 4; ++j) {
      const float ty = d::pad(y0 - 1.0f + static_cast<float>(j), p.in_h, p);
      float across = 0.0f;
      for (int i = 0; i < 4; ++i) {
        const float tx = d::pad(x0 - 1.0f + static_cast<float>(i), p.in_w, p);
        across += wx[i] * d::tap(plane, static_cast<int64_t>(ty), static_cast<int64_t>(tx), p);
      }
      sum += wy[j] * across;
    }
    return sum;
  }
  const float sx = d::pad(ux, p.in_w, p), sy = d::pad(uy, p.in_h, p);
  if (!d::indexable(sx) || !d::indexable(sy)) return 0.0f;
  if (p.mode == GridSampleMode::kNearest)
    return d::tap(plane, static_cast<int64_t>(nearbyintf(sy)), static_cast<int64_t>(nearbyintf(sx)), p);
  const float x0 = floorf(sx), y0 = floorf(sy);
  const float tx = sx - x0, ty = sy - y0;
  const auto ix = static_cast<int64_t>(x0), iy = static_cast<int64_t>(y0);
  const float top = d::tap(plane, iy, ix, p) * (1.0f - tx) + d::tap(plane, iy, ix + 1, p) * tx;
  const float bottom = d::tap(plane, iy + 1, ix, p) * (1.0f - tx) + d::tap(plane, iy + 1, ix + 1, p) * tx;
  return top * (1.0f - ty) + bottom * ty;
}

}  // namespace ucudnn
