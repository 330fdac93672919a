// Resize's coordinate arithmetic (Note [resize coordinates], runtime/ops/resize.h): plain inline
// functions, __host__ __device__ under nvcc, shared by the CPU kernel and the CUDA kernel. Light on
// includes so that an nvcc unit can take it.
#pragma once

#include <math.h>

#include <cstdint>

#if defined(__CUDACC__)
#define UCUDNN_RESIZE_HOST_DEVICE __host__ __device__
#else
#define UCUDNN_RESIZE_HOST_DEVICE
#endif

namespace ucudnn {

enum class ResizeMode : int { kNearest, kLinear, kCubic };
enum class ResizeCoordinates : int { kHalfPixel, kHalfPixelSymmetric, kPytorchHalfPixel, kAlignCorners, kAsymmetric };
enum class NearestRounding : int { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil };

// One spatial axis: input and output sizes; the scale the coordinates use (the given scale, or
// out / in when sizes were given); the resized length they use (in · scale, not rounded, as ONNX's
// reference: align_corners and pytorch_half_pixel read it); half_pixel_symmetric's offset.
struct ResizeAxis {
  int64_t in = 1, out = 1;
  float scale = 1.0f;
  float length = 1.0f;
  float offset = 0.0f;
};

struct ResizeParams {
  ResizeMode mode = ResizeMode::kNearest;
  ResizeCoordinates coordinates = ResizeCoordinates::kHalfPixel;
  NearestRounding rounding = NearestRounding::kRoundPreferFloor;
  float cubic_a = -0.75f;        // cubic_coeff_a
  bool exclude_outside = false;  // cubic: taps outside the input weigh 0, the others renormalised
  ResizeAxis h, w;  // a rank-3 X has h = {1, 1}
};

// The source coordinate of output index `i` (Note [resize coordinates]).
UCUDNN_RESIZE_HOST_DEVICE inline float resize_source_coordinate(const ResizeAxis& a, ResizeCoordinates c,
                                                                int64_t i) {
  const float x = static_cast<float>(i);
  switch (c) {
    case ResizeCoordinates::kHalfPixel: return (x + 0.5f) / a.scale - 0.5f;
    case ResizeCoordinates::kHalfPixelSymmetric: return a.offset + ((x + 0.5f) / a.scale - 0.5f);
    case ResizeCoordinates::kPytorchHalfPixel: return a.length > 1.0f ? (x + 0.5f) / a.scale - 0.5f : 0.0f;
    case ResizeCoordinates::kAlignCorners:
      return a.length > 1.0f ? x * static_cast<float>(a.in - 1) / (a.length - 1.0f) : 0.0f;
    case ResizeCoordinates::kAsymmetric: return x / a.scale;
  }
  return 0.0f;
}

// The nearest input index to source coordinate `s` by `r`, clamped to [0, in).
UCUDNN_RESIZE_HOST_DEVICE inline int64_t resize_nearest_index(float s, NearestRounding r, int64_t in) {
  float picked = floorf(s);
  const float fraction = s - picked;
  switch (r) {
    case NearestRounding::kRoundPreferFloor: picked = fraction <= 0.5f ? picked : picked + 1.0f; break;
    case NearestRounding::kRoundPreferCeil: picked = fraction < 0.5f ? picked : picked + 1.0f; break;
    case NearestRounding::kFloor: break;
    case NearestRounding::kCeil: picked = fraction > 0.0f ? picked + 1.0f : picked; break;
  }
  if (picked < 0.0f) return 0;
  return picked >= static_cast<float>(in) ? in - 1 : static_cast<int64_t>(picked);
}

// Linear interpolation along one axis: out = src[first] + (src[second] - src[first]) · weight.
struct LinearTap {
  int64_t first = 0, second = 0;
  float weight = 0.0f;
};

// The linear tap of source coordinate `s`; outside [0, in - 1] the edge element (as ONNX's
// reference, which pads by the edge).
UCUDNN_RESIZE_HOST_DEVICE inline LinearTap resize_linear_tap(float s, int64_t in) {
  const float top = static_cast<float>(in - 1);
  s = s < 0.0f ? 0.0f : (s > top ? top : s);
  LinearTap t;
  t.first = static_cast<int64_t>(floorf(s));
  t.second = t.first + 1 < in ? t.first + 1 : t.first;
  t.weight = s - static_cast<float>(t.first);
  return t;
}

// Cubic interpolation along one axis (Keys' kernel with coefficient a, ONNX's cubic_coeff_a): the four
// elements around source coordinate s, floor(s) - 1 .. floor(s) + 2, clamped to the input's edge (ONNX's
// reference pads by the edge), with weights that sum to 1; with exclude_outside the taps outside the input
// weigh 0 and the rest are renormalised.
struct CubicTaps {
  int64_t index[4] = {0, 0, 0, 0};
  float weight[4] = {0.0f, 0.0f, 0.0f, 0.0f};
};

UCUDNN_RESIZE_HOST_DEVICE inline CubicTaps resize_cubic_taps(float s, int64_t in, float a, bool exclude_outside) {
  const float base = floorf(s);
  const float t = s - base;  // in [0, 1)
  // Keys' kernel at the distances 1 + t, t, 1 - t, 2 - t.
  const float d0 = 1.0f + t, d3 = 2.0f - t;
  CubicTaps taps;
  taps.weight[0] = ((a * d0 - 5.0f * a) * d0 + 8.0f * a) * d0 - 4.0f * a;
  taps.weight[1] = ((a + 2.0f) * t - (a + 3.0f)) * t * t + 1.0f;
  taps.weight[2] = ((a + 2.0f) * (1.0f - t) - (a + 3.0f)) * (1.0f - t) * (1.0f - t) + 1.0f;
  taps.weight[3] = ((a * d3 - 5.0f * a) * d3 + 8.0f * a) * d3 - 4.0f * a;
  float kept = 0.0f;
  for (int k = 0; k < 4; ++k) {
    const int64_t i = static_cast<int64_t>(base) - 1 + k;
    const bool outside = i < 0 || i >= in;
    if (exclude_outside && outside) taps.weight[k] = 0.0f;
    kept += taps.weight[k];
    taps.index[k] = i < 0 ? 0 : (i >= in ? in - 1 : i);
  }
  if (exclude_outside && kept != 0.0f)
    for (int k = 0; k < 4; ++k) taps.weight[k] /= kept;
  return taps;
}

}  // namespace ucudnn
