// PNG and JPEG encoders (libpng, libjpeg) for writing test fixtures at test time — library
// ucudnn_data_encode, which the training code does not link. Pixels are 8-bit, rows top to
// bottom, channels interleaved. Each returns the file's bytes, or InvalidArgument for bad sizes
// and what the library reported.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/core/status.h"

namespace ucudnn::data {

// `channels`: 1 grey, 2 grey + alpha, 3 RGB, 4 RGBA. `bit_depth` 8 or 16 (16: each sample's
// value v is stored as v·257, so its high byte is v again). `interlaced`: Adam7.
Expected<std::string> encode_png(int64_t height, int64_t width, int channels, const uint8_t* pixels,
                                 int bit_depth = 8, bool interlaced = false);
// A palette PNG: one index per pixel into `palette` (RGB triples, at most 256).
Expected<std::string> encode_png_palette(int64_t height, int64_t width, const uint8_t* indices,
                                         const std::vector<uint8_t>& palette);
// `channels`: 1 grey or 3 RGB; quality 1..100 (4:2:0 subsampling for RGB, libjpeg's default).
Expected<std::string> encode_jpeg(int64_t height, int64_t width, int channels, const uint8_t* pixels,
                                  int quality = 95);

}  // namespace ucudnn::data
