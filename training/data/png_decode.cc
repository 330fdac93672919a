// PNG decoding with libpng into RGB (see image_decode.h): palettes expanded, grey replicated,
// alpha dropped, 16-bit samples reduced to their high byte (png_set_strip_16), as PIL's
// convert("RGB") does. Errors longjmp as in Note [setjmp decoding] (jpeg_decode.cc).
#include <png.h>

#include <cstdio>
#include <cstring>
#include <new>

#include "training/data/image_decode.h"

namespace ucudnn::data {
namespace {

// What libpng reads from (the file's bytes) and where its error message goes.
struct PngSource {
  const uint8_t* data = nullptr;
  size_t size = 0, offset = 0;
  char message[256] = {};
};

[[noreturn]] void on_error(png_structp png, png_const_charp message) {
  auto* source = static_cast<PngSource*>(png_get_error_ptr(png));
  std::snprintf(source->message, sizeof source->message, "%s", message);
  png_longjmp(png, 1);
}

void on_warning(png_structp, png_const_charp) {}

void read_bytes(png_structp png, png_bytep dst, size_t n) {
  auto* source = static_cast<PngSource*>(png_get_io_ptr(png));
  if (n > source->size - source->offset) png_error(png, "the file ends early (truncated)");
  std::memcpy(dst, source->data + source->offset, n);
  source->offset += n;
}

void fail(PngSource* source, const char* message) {
  std::snprintf(source->message, sizeof source->message, "%s", message);
}

// Decodes into *image (rows: one pointer per row, the caller's). See Note [setjmp decoding].
bool run_decoder(png_structp png, png_infop info, PngSource* source, RgbImage* image, std::vector<png_bytep>* rows) {
  if (setjmp(png_jmpbuf(png))) return false;
  png_set_read_fn(png, source, read_bytes);
  png_read_info(png, info);
  const png_uint_32 width = png_get_image_width(png, info), height = png_get_image_height(png, info);
  if (static_cast<int64_t>(width) * height > kMaxImagePixels) {
    std::snprintf(source->message, sizeof source->message, "%u x %u pixels is more than the %lld read at most", width,
                  height, static_cast<long long>(kMaxImagePixels));
    return false;
  }
  // Deflate expands at most 1032:1, so a header whose rows (and their filter bytes) could not come out of
  // the bytes left is refused before the image's memory is taken (a 56-byte file asked for 402 MB).
  const uint64_t raw_bytes = uint64_t{height} * (png_get_rowbytes(png, info) + 1);
  if (raw_bytes > 1032 * uint64_t{source->size - source->offset} + 1032) {
    std::snprintf(source->message, sizeof source->message,
                  "%u x %u pixels need %llu bytes of image data, more than the %zu bytes left can hold", width,
                  height, static_cast<unsigned long long>(raw_bytes), source->size - source->offset);
    return false;
  }
  const int color_type = png_get_color_type(png, info);
  const int bit_depth = png_get_bit_depth(png, info);
  if (bit_depth == 16) png_set_strip_16(png);
  if (color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if ((color_type & PNG_COLOR_MASK_COLOR) == 0) {
    if (bit_depth < 8) png_set_expand_gray_1_2_4_to_8(png);
    png_set_gray_to_rgb(png);
  }
  // A palette's transparency (tRNS) becomes an alpha channel through png_set_palette_to_rgb: dropped too.
  if ((color_type & PNG_COLOR_MASK_ALPHA) != 0 || png_get_valid(png, info, PNG_INFO_tRNS) != 0)
    png_set_strip_alpha(png);
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  if (png_get_channels(png, info) != 3 || png_get_rowbytes(png, info) != size_t{width} * 3) {
    fail(source, "libpng did not produce 8-bit RGB rows");
    return false;
  }
  image->height = height;
  image->width = width;
  try {
    image->pixels.resize(static_cast<size_t>(image->height * image->width * 3));
    rows->resize(height);
  } catch (const std::bad_alloc&) {
    fail(source, "out of memory for the decoded image");
    return false;
  }
  for (png_uint_32 y = 0; y < height; ++y) (*rows)[y] = image->pixels.data() + size_t{y} * width * 3;
  png_read_image(png, rows->data());
  png_read_end(png, nullptr);
  return true;
}

}  // namespace

Expected<RgbImage> decode_png(const uint8_t* data, size_t size, const std::string& name) {
  PngSource source;
  source.data = data;
  source.size = size;
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &source, on_error, on_warning);
  if (png == nullptr) return out_of_memory("cannot decode PNG '" + name + "': libpng could not start");
  png_infop info = png_create_info_struct(png);
  if (info == nullptr) {
    png_destroy_read_struct(&png, nullptr, nullptr);
    return out_of_memory("cannot decode PNG '" + name + "': libpng could not start");
  }
  RgbImage image;
  std::vector<png_bytep> rows;
  const bool ok = run_decoder(png, info, &source, &image, &rows);
  png_destroy_read_struct(&png, &info, nullptr);
  if (!ok) return invalid_argument("cannot decode PNG '" + name + "': " + source.message);
  return image;
}

}  // namespace ucudnn::data
