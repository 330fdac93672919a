// torchvision's standard ImageNet transforms (the reference recipe of torchvision's
// classification scripts), on an 8-bit RGB image, writing float32 [3, size, size]:
//
//   train: RandomResizedCrop(size, scale=(0.08, 1), ratio=(3/4, 4/3)) → RandomHorizontalFlip(0.5)
//          → ToTensor → Normalize(mean, std)
//   eval:  Resize(size · 256 / 224, integer division: 224 → 256) → CenterCrop(size) → ToTensor
//          → Normalize(mean, std)
//
// Resizing is bilinear as PyTorch's interpolate(mode="bilinear", align_corners=False,
// antialias=False): no antialiasing (PIL's resize, torchvision's default for PIL images, smooths
// when shrinking; results then differ slightly). It runs on the pixel values in float, without
// rounding the resized image back to 8 bits. The crop box, the flip and rounding follow
// torchvision 0.14 exactly (Python's round: halves to even); the random draws are SampleRng's
// (random.h), in this order: RandomResizedCrop's (scale, log-ratio, then top, left) per attempt,
// then the flip (flip when uniform() < 0.5).
#pragma once

#include <array>
#include <cstdint>

#include "training/data/image_decode.h"
#include "training/data/random.h"

namespace ucudnn::data {

// ImageNet's per-channel mean and std of [0, 1] pixels (torchvision's Normalize values).
inline constexpr std::array<float, 3> kImageNetMean = {0.485f, 0.456f, 0.406f};
inline constexpr std::array<float, 3> kImageNetStd = {0.229f, 0.224f, 0.225f};

// A rectangle of an image: rows [top, top + height), columns [left, left + width).
struct CropBox {
  int64_t top = 0, left = 0, height = 0, width = 0;
};

// RandomResizedCrop.get_params of torchvision for a height × width image: up to 10 attempts of
// area · U(scale) with aspect exp(U(log ratio)), else the central crop clamped to the ratio range.
CropBox random_resized_crop_box(int64_t height, int64_t width, SampleRng& rng, double scale_min = 0.08,
                                double scale_max = 1.0, double ratio_min = 3.0 / 4.0, double ratio_max = 4.0 / 3.0);

// Resize(size)'s output for a height × width image: the short side becomes `size`, the long one
// int(size · long / short). {height, width}.
std::array<int64_t, 2> resize_short_side(int64_t height, int64_t width, int64_t size);

// CenterCrop(size)'s box in a height × width image (height, width >= size): top =
// round((height − size) / 2), left likewise.
CropBox center_crop_box(int64_t height, int64_t width, int64_t size);

// Resizes the `box` of `src` bilinearly to resized_height × resized_width (pixel centres aligned,
// edges clamped to the box) and writes the `window` of that result to dst as float32
// [3, window.height, window.width] holding pixel / 255.
void resize_window(const RgbImage& src, const CropBox& box, int64_t resized_height, int64_t resized_width,
                   const CropBox& window, float* dst);

// Mirrors each row of a [channels, height, width] tensor.
void flip_horizontal(float* chw, int64_t channels, int64_t height, int64_t width);

// (x − mean[c]) / std[c] for each channel c of a [3, height, width] tensor.
void normalize(float* chw, int64_t height, int64_t width, const std::array<float, 3>& mean,
               const std::array<float, 3>& std);

struct TransformOptions {
  int64_t size = 224;  // output height and width
  bool train = true;   // the train recipe (random crop + flip), else the eval one
  std::array<float, 3> mean = kImageNetMean;
  std::array<float, 3> std = kImageNetStd;
};

// The whole recipe above: `image` → dst float32 [3, size, size], the train recipe's draws from `seed`.
void apply_transforms(const RgbImage& image, const TransformOptions& options, uint64_t seed, float* dst);

}  // namespace ucudnn::data
