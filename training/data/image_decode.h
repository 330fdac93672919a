// Decoding JPEG (libjpeg-turbo) and PNG (libpng) files into 8-bit RGB, as torchvision's default
// loader does with PIL's Image.convert("RGB"): grey is replicated into R, G and B, palettes are
// expanded, an alpha channel is dropped (not composited), 16-bit PNG samples keep their high byte.
// JPEG in CMYK or YCCK is refused (PIL would convert it; libjpeg cannot).
//
// The format is told by the file's first bytes, not its name. A corrupt or truncated file is an
// error naming the file and what the library reported — never a crash, never an image half
// filled with grey: a JPEG that ends early is refused as PIL refuses it. Images over
// kMaxImagePixels are refused before anything is allocated for them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/core/status.h"

namespace ucudnn::data {

// 2^27 pixels (e.g. 11585 x 11585): 384 MiB as RGB bytes.
inline constexpr int64_t kMaxImagePixels = int64_t{1} << 27;
// Image files larger than this are refused without being read.
inline constexpr int64_t kMaxImageFileBytes = int64_t{1} << 30;

// An 8-bit RGB image, rows top to bottom, pixels interleaved (HWC).
struct RgbImage {
  int64_t height = 0, width = 0;
  std::vector<uint8_t> pixels;  // height * width * 3

  uint8_t at(int64_t y, int64_t x, int64_t c) const { return pixels[static_cast<size_t>((y * width + x) * 3 + c)]; }
};

// Decodes a JPEG or PNG held in memory; `name` (the file's path) goes into error messages.
Expected<RgbImage> decode_image(const uint8_t* data, size_t size, const std::string& name);
Expected<RgbImage> decode_jpeg(const uint8_t* data, size_t size, const std::string& name);
Expected<RgbImage> decode_png(const uint8_t* data, size_t size, const std::string& name);

// Reads `path` (read-only) and decodes it.
Expected<RgbImage> read_image_file(const std::string& path);

}  // namespace ucudnn::data
