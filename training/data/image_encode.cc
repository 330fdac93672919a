// PNG and JPEG encoders for fixtures (see image_encode.h). Errors longjmp as in Note [setjmp
// decoding] (jpeg_decode.cc).
#include "training/data/image_encode.h"

#include <csetjmp>
#include <cstdio>  // before jpeglib.h, which uses FILE and size_t
#include <cstdlib>

#include <jpeglib.h>
#include <png.h>

namespace ucudnn::data {
namespace {

struct PngSink {
  std::string* bytes;
  char message[256];
};

[[noreturn]] void png_on_error(png_structp png, png_const_charp message) {
  auto* sink = static_cast<PngSink*>(png_get_error_ptr(png));
  std::snprintf(sink->message, sizeof sink->message, "%s", message);
  png_longjmp(png, 1);
}

void png_on_warning(png_structp, png_const_charp) {}

void png_write_bytes(png_structp png, png_bytep data, size_t n) {
  auto* sink = static_cast<PngSink*>(png_get_io_ptr(png));
  sink->bytes->append(reinterpret_cast<const char*>(data), n);
}

void png_flush(png_structp) {}

struct PngImage {
  int64_t height, width;
  int color_type, bit_depth;
  bool interlaced;
  const std::vector<uint8_t>* palette;  // RGB triples, for PNG_COLOR_TYPE_PALETTE
  std::vector<png_bytep>* rows;         // filled by write_png
  std::vector<png_color>* colors;       // the palette as libpng takes it, filled by write_png
};

bool run_png_writer(png_structp png, png_infop info, PngSink* sink, const PngImage* image) {
  if (setjmp(png_jmpbuf(png))) return false;
  png_set_write_fn(png, sink, png_write_bytes, png_flush);
  png_set_IHDR(png, info, static_cast<png_uint_32>(image->width), static_cast<png_uint_32>(image->height),
               image->bit_depth, image->color_type, image->interlaced ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  if (image->palette != nullptr)
    png_set_PLTE(png, info, image->colors->data(), static_cast<int>(image->colors->size()));
  png_write_info(png, info);
  png_write_image(png, image->rows->data());
  png_write_end(png, nullptr);
  return true;
}

Expected<std::string> write_png(const PngImage& image, const std::vector<uint8_t>& samples) {
  std::string bytes;
  PngSink sink{&bytes, {}};
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &sink, png_on_error, png_on_warning);
  if (png == nullptr) return out_of_memory("libpng could not start");
  png_infop info = png_create_info_struct(png);
  std::vector<png_bytep> rows(static_cast<size_t>(image.height));
  const size_t row_bytes = samples.size() / static_cast<size_t>(image.height);
  for (size_t y = 0; y < rows.size(); ++y) rows[y] = const_cast<uint8_t*>(samples.data()) + y * row_bytes;
  std::vector<png_color> colors;
  if (image.palette != nullptr)
    for (size_t i = 0; i + 2 < image.palette->size(); i += 3)
      colors.push_back({(*image.palette)[i], (*image.palette)[i + 1], (*image.palette)[i + 2]});
  PngImage with_rows = image;
  with_rows.rows = &rows;
  with_rows.colors = &colors;
  const bool ok = info != nullptr && run_png_writer(png, info, &sink, &with_rows);
  png_destroy_write_struct(&png, &info);
  if (!ok) return invalid_argument(std::string("encoding a PNG failed: ") + sink.message);
  return bytes;
}

Status check_size(int64_t height, int64_t width) {
  if (height < 1 || width < 1 || height > 65500 || width > 65500)
    return invalid_argument("cannot encode an image of " + std::to_string(height) + " x " + std::to_string(width));
  return Status::ok();
}

struct JpegError {
  jpeg_error_mgr manager;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

[[noreturn]] void jpeg_on_error(j_common_ptr cinfo) {
  auto* error = reinterpret_cast<JpegError*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, error->message);
  std::longjmp(error->jump, 1);
}

bool run_jpeg_writer(jpeg_compress_struct* cinfo, JpegError* error, int64_t height, int64_t width, int channels,
                     const uint8_t* pixels, int quality, unsigned char** out, unsigned long* out_size) {
  if (setjmp(error->jump)) return false;
  jpeg_create_compress(cinfo);
  jpeg_mem_dest(cinfo, out, out_size);
  cinfo->image_width = static_cast<JDIMENSION>(width);
  cinfo->image_height = static_cast<JDIMENSION>(height);
  cinfo->input_components = channels;
  cinfo->in_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(cinfo);
  jpeg_set_quality(cinfo, quality, TRUE);
  jpeg_start_compress(cinfo, TRUE);
  while (cinfo->next_scanline < cinfo->image_height) {
    JSAMPROW row = const_cast<uint8_t*>(pixels) + static_cast<size_t>(cinfo->next_scanline) * width * channels;
    jpeg_write_scanlines(cinfo, &row, 1);
  }
  jpeg_finish_compress(cinfo);
  return true;
}

}  // namespace

Expected<std::string> encode_png(int64_t height, int64_t width, int channels, const uint8_t* pixels, int bit_depth,
                                 bool interlaced) {
  UCUDNN_RETURN_IF_ERROR(check_size(height, width));
  static constexpr int kColorTypes[] = {PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA, PNG_COLOR_TYPE_RGB,
                                        PNG_COLOR_TYPE_RGB_ALPHA};
  if (channels < 1 || channels > 4 || (bit_depth != 8 && bit_depth != 16))
    return invalid_argument("encode_png takes 1 to 4 channels of 8 or 16 bits");
  const size_t count = static_cast<size_t>(height * width * channels);
  std::vector<uint8_t> samples(pixels, pixels + count);
  if (bit_depth == 16) {  // big-endian v·257: both bytes v
    samples.resize(2 * count);
    for (size_t i = 0; i < count; ++i) samples[2 * i] = samples[2 * i + 1] = pixels[i];
  }
  const PngImage image{height, width, kColorTypes[channels - 1], bit_depth, interlaced, nullptr, nullptr, nullptr};
  return write_png(image, samples);
}

Expected<std::string> encode_png_palette(int64_t height, int64_t width, const uint8_t* indices,
                                         const std::vector<uint8_t>& palette) {
  UCUDNN_RETURN_IF_ERROR(check_size(height, width));
  if (palette.empty() || palette.size() % 3 != 0 || palette.size() > 3 * 256)
    return invalid_argument("a PNG palette holds 1 to 256 RGB triples");
  std::vector<uint8_t> samples(indices, indices + height * width);
  return write_png({height, width, PNG_COLOR_TYPE_PALETTE, 8, false, &palette, nullptr, nullptr}, samples);
}

Expected<std::string> encode_jpeg(int64_t height, int64_t width, int channels, const uint8_t* pixels, int quality) {
  UCUDNN_RETURN_IF_ERROR(check_size(height, width));
  if (channels != 1 && channels != 3) return invalid_argument("encode_jpeg takes 1 or 3 channels");
  jpeg_compress_struct cinfo{};
  JpegError error{};
  cinfo.err = jpeg_std_error(&error.manager);
  error.manager.error_exit = jpeg_on_error;
  unsigned char* out = nullptr;
  unsigned long out_size = 0;
  const bool ok = run_jpeg_writer(&cinfo, &error, height, width, channels, pixels, quality, &out, &out_size);
  jpeg_destroy_compress(&cinfo);
  std::string bytes;
  if (ok) bytes.assign(reinterpret_cast<const char*>(out), out_size);
  std::free(out);
  if (!ok) return invalid_argument(std::string("encoding a JPEG failed: ") + error.message);
  return bytes;
}

}  // namespace ucudnn::data
