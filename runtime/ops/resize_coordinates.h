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

enum class ResizeMode : int { kNearest, kLinear };
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

}  // namespace ucudnn
