// torchvision's standard transforms (see transforms.h): crop boxes, bilinear resize, flip, normalise.
#include "training/data/transforms.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace ucudnn::data {
namespace {

// Python's round() to an integer: halves go to the even neighbour (nearbyint in the default
// rounding mode).
int64_t python_round(double x) { return static_cast<int64_t>(std::nearbyint(x)); }

// One output coordinate's two source taps and their weights (PyTorch's upsample_bilinear2d,
// align_corners=False): src = scale · (dst + 0.5) − 0.5 clamped at 0, scale = in / out in float.
struct Tap {
  int64_t first, second;  // offsets within the box
  float weight_first, weight_second;
};

std::vector<Tap> bilinear_taps(int64_t in_size, int64_t out_size, int64_t window_start, int64_t window_size) {
  const float scale = static_cast<float>(in_size) / static_cast<float>(out_size);
  std::vector<Tap> taps(static_cast<size_t>(window_size));
  for (int64_t i = 0; i < window_size; ++i) {
    const float src = std::max(scale * (static_cast<float>(window_start + i) + 0.5f) - 0.5f, 0.0f);
    const auto first = std::min(static_cast<int64_t>(src), in_size - 1);
    const float lambda = std::min(src - static_cast<float>(first), 1.0f);
    taps[static_cast<size_t>(i)] = {first, first + (first < in_size - 1 ? 1 : 0), 1.0f - lambda, lambda};
  }
  return taps;
}

}  // namespace

CropBox random_resized_crop_box(int64_t height, int64_t width, SampleRng& rng, double scale_min, double scale_max,
                                double ratio_min, double ratio_max) {
  const double area = static_cast<double>(height) * static_cast<double>(width);
  const double log_ratio_min = std::log(ratio_min), log_ratio_max = std::log(ratio_max);
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double target_area = area * rng.uniform(scale_min, scale_max);
    const double aspect = std::exp(rng.uniform(log_ratio_min, log_ratio_max));
    const int64_t w = python_round(std::sqrt(target_area * aspect));
    const int64_t h = python_round(std::sqrt(target_area / aspect));
    if (0 < w && w <= width && 0 < h && h <= height) {
      const int64_t top = rng.integer(0, height - h);
      const int64_t left = rng.integer(0, width - w);
      return {top, left, h, w};
    }
  }
  // Fallback: the central crop, clamped to the ratio range.
  const double in_ratio = static_cast<double>(width) / static_cast<double>(height);
  int64_t w = width, h = height;
  if (in_ratio < ratio_min) {
    h = python_round(static_cast<double>(w) / ratio_min);
  } else if (in_ratio > ratio_max) {
    w = python_round(static_cast<double>(h) * ratio_max);
  }
  return {(height - h) / 2, (width - w) / 2, h, w};
}

std::array<int64_t, 2> resize_short_side(int64_t height, int64_t width, int64_t size) {
  if (height <= width) return {size, static_cast<int64_t>(static_cast<double>(size) * width / height)};
  return {static_cast<int64_t>(static_cast<double>(size) * height / width), size};
}

CropBox center_crop_box(int64_t height, int64_t width, int64_t size) {
  return {python_round(static_cast<double>(height - size) / 2.0), python_round(static_cast<double>(width - size) / 2.0),
          size, size};
}

void resize_window(const RgbImage& src, const CropBox& box, int64_t resized_height, int64_t resized_width,
                   const CropBox& window, float* dst) {
  const std::vector<Tap> rows = bilinear_taps(box.height, resized_height, window.top, window.height);
  const std::vector<Tap> cols = bilinear_taps(box.width, resized_width, window.left, window.width);
  const int64_t plane = window.height * window.width;
  const int64_t stride = src.width * 3;
  for (int64_t y = 0; y < window.height; ++y) {
    const Tap& row = rows[static_cast<size_t>(y)];
    const uint8_t* line0 = src.pixels.data() + (box.top + row.first) * stride + box.left * 3;
    const uint8_t* line1 = src.pixels.data() + (box.top + row.second) * stride + box.left * 3;
    for (int64_t x = 0; x < window.width; ++x) {
      const Tap& col = cols[static_cast<size_t>(x)];
      for (int64_t c = 0; c < 3; ++c) {
        const int64_t first = col.first * 3 + c, second = col.second * 3 + c;
        const float top = col.weight_first * line0[first] + col.weight_second * line0[second];
        const float bottom = col.weight_first * line1[first] + col.weight_second * line1[second];
        dst[c * plane + y * window.width + x] = (row.weight_first * top + row.weight_second * bottom) / 255.0f;
      }
    }
  }
}

void flip_horizontal(float* chw, int64_t channels, int64_t height, int64_t width) {
  for (int64_t r = 0; r < channels * height; ++r) std::reverse(chw + r * width, chw + (r + 1) * width);
}

void normalize(float* chw, int64_t height, int64_t width, const std::array<float, 3>& mean,
               const std::array<float, 3>& std) {
  const int64_t plane = height * width;
  for (int64_t c = 0; c < 3; ++c)
    for (int64_t i = 0; i < plane; ++i) chw[c * plane + i] = (chw[c * plane + i] - mean[c]) / std[c];
}

void apply_transforms(const RgbImage& image, const TransformOptions& options, uint64_t seed, float* dst) {
  const int64_t size = options.size;
  const CropBox whole{0, 0, image.height, image.width};
  if (options.train) {
    SampleRng rng(seed);
    const CropBox box = random_resized_crop_box(image.height, image.width, rng);
    resize_window(image, box, size, size, {0, 0, size, size}, dst);
    if (rng.uniform() < 0.5) flip_horizontal(dst, 3, size, size);
  } else {
    const auto [height, width] = resize_short_side(image.height, image.width, size * 256 / 224);
    resize_window(image, whole, height, width, center_crop_box(height, width, size), dst);
  }
  normalize(dst, size, size, options.mean, options.std);
}

}  // namespace ucudnn::data
