// JPEG decoding with libjpeg(-turbo) into RGB (see image_decode.h).
//
// Note [setjmp decoding]: libjpeg and libpng report errors through a callback that must not
// return; ours longjmp back to the setjmp in a small function that holds no C++ object with a
// destructor and reads no local changed after setjmp once it jumps back, so the jump skips no
// destructor and sees no clobbered value. What outlives the decoder (the image, the library's
// struct) belongs to the caller, which releases the library's memory whichever way it ends.
#include <csetjmp>
#include <cstdio>  // before jpeglib.h, which uses FILE and size_t
#include <new>

#include <jerror.h>
#include <jpeglib.h>

#include "training/data/image_decode.h"

namespace ucudnn::data {
namespace {

struct JpegError {
  jpeg_error_mgr manager;  // first: libjpeg hands back &manager as cinfo->err
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

[[noreturn]] void on_error(j_common_ptr cinfo) {
  auto* error = reinterpret_cast<JpegError*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, error->message);
  std::longjmp(error->jump, 1);
}

// Warnings (level −1) are ignored as PIL ignores them, except data that ends early — the file
// (JWRN_JPEG_EOF; PIL refuses a truncated JPEG too) or a scan's data before its next marker
// (JWRN_HIT_MARKER) — where libjpeg would fill the rest with grey.
void on_message(j_common_ptr cinfo, int level) {
  const int code = cinfo->err->msg_code;
  if (level == -1 && (code == JWRN_JPEG_EOF || code == JWRN_HIT_MARKER)) on_error(cinfo);
}

void no_output(j_common_ptr) {}

void fail(JpegError* error, const char* message) {
  std::snprintf(error->message, sizeof error->message, "%s", message);
}

// Decodes into *image; false with error->message set on failure. See Note [setjmp decoding].
bool run_decoder(jpeg_decompress_struct* cinfo, JpegError* error, const uint8_t* data, size_t size, RgbImage* image) {
  if (setjmp(error->jump)) return false;
  jpeg_create_decompress(cinfo);
  jpeg_mem_src(cinfo, const_cast<unsigned char*>(data), static_cast<unsigned long>(size));
  jpeg_read_header(cinfo, TRUE);
  if (cinfo->jpeg_color_space == JCS_CMYK || cinfo->jpeg_color_space == JCS_YCCK) {
    fail(error, "CMYK/YCCK JPEGs are not supported (convert the file to RGB)");
    return false;
  }
  if (static_cast<int64_t>(cinfo->image_width) * cinfo->image_height > kMaxImagePixels) {
    std::snprintf(error->message, sizeof error->message, "%u x %u pixels is more than the %lld read at most",
                  cinfo->image_width, cinfo->image_height, static_cast<long long>(kMaxImagePixels));
    return false;
  }
  cinfo->out_color_space = JCS_RGB;
  jpeg_start_decompress(cinfo);
  if (cinfo->output_components != 3) {
    fail(error, "libjpeg did not produce 3 components");
    return false;
  }
  image->height = cinfo->output_height;
  image->width = cinfo->output_width;
  try {
    image->pixels.resize(static_cast<size_t>(image->height * image->width * 3));
  } catch (const std::bad_alloc&) {
    fail(error, "out of memory for the decoded image");
    return false;
  }
  while (cinfo->output_scanline < cinfo->output_height) {
    JSAMPROW row = image->pixels.data() + static_cast<size_t>(cinfo->output_scanline) * image->width * 3;
    jpeg_read_scanlines(cinfo, &row, 1);
  }
  jpeg_finish_decompress(cinfo);
  return true;
}

}  // namespace

Expected<RgbImage> decode_jpeg(const uint8_t* data, size_t size, const std::string& name) {
  jpeg_decompress_struct cinfo{};
  JpegError error{};
  cinfo.err = jpeg_std_error(&error.manager);
  error.manager.error_exit = on_error;
  error.manager.emit_message = on_message;
  error.manager.output_message = no_output;
  RgbImage image;
  const bool ok = run_decoder(&cinfo, &error, data, size, &image);
  jpeg_destroy_decompress(&cinfo);
  if (!ok) return invalid_argument("cannot decode JPEG '" + name + "': " + error.message);
  return image;
}

}  // namespace ucudnn::data
