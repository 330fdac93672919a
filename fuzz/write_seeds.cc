// fuzz_write_seeds DIR: writes the seeds of the targets whose files nothing in the source tree
// holds — DIR/checkpoint/ (save_checkpoint's files) and DIR/image/ (PNGs and JPEGs of every
// kind decode_image reads, from the encoders the data tests use) — for scripts/fuzz. The seeds come
// from the project's own writers, so they follow the formats as the readers expect them; libjpeg
// directly writes the JPEGs those do not (progressive, arithmetic-coded, CMYK).
#include <cstdint>
#include <cstdio>  // before jpeglib.h, which uses FILE and size_t
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <jpeglib.h>

#include "training/checkpoint.h"
#include "training/data/image_encode.h"

namespace {

namespace fs = std::filesystem;
using ucudnn::Expected;
using ucudnn::Status;
using ucudnn::Tensor;
namespace data = ucudnn::data;
namespace training = ucudnn::training;

bool report(const Status& status, const std::string& what) {
  if (status.is_ok()) return true;
  std::fprintf(stderr, "fuzz_write_seeds: %s: %s\n", what.c_str(), status.to_string().c_str());
  return false;
}

bool write_file(const fs::path& path, const Expected<std::string>& bytes) {
  if (!bytes) return report(bytes.status(), path.string());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << *bytes;
  return true;
}

// Checkpoints: an empty one, one of every field and dtype (as tests/checkpoint_test.cc), rank 8.
bool write_checkpoints(const fs::path& dir) {
  training::Checkpoint empty;
  training::Checkpoint full;
  full.tensors["conv1.weight"] = Tensor::from_floats({2, 1, 2, 2}, std::vector<float>{1, -2, 3.5f, 4, 5, 6, -7, 8e-9f});
  full.tensors["conv1.weight.exp_avg"] = Tensor::from_floats({2, 1, 2, 2}, std::vector<float>(8, 0.25f));
  full.tensors["bn.num_batches"] = Tensor::from_int64s({1}, std::vector<int64_t>{int64_t{1} << 40});
  full.tensors["scalar"] = Tensor::from_floats({}, std::vector<float>{42});
  full.tensors["empty"] = Tensor::from_floats({0, 3}, std::vector<float>{});
  full.step = 1234;
  full.epoch = 7;
  full.rng_state = {0x0123456789abcdefull, 42, ~0ull};
  full.graph_fingerprint = "training graph sha: 9f2c";
  full.optimizer_config = "adamw,beta1=0.9,beta2=0.999";
  training::Checkpoint rank8;
  rank8.tensors["w"] = Tensor::from_floats({1, 2, 1, 2, 1, 2, 1, 1}, std::vector<float>(8, -1.5f));
  rank8.rng_state = {7};
  return report(training::save_checkpoint((dir / "empty.ckpt").string(), empty), "empty.ckpt") &&
         report(training::save_checkpoint((dir / "full.ckpt").string(), full), "full.ckpt") &&
         report(training::save_checkpoint((dir / "rank8.ckpt").string(), rank8), "rank8.ckpt");
}

// A JPEG of `components` (1 grey, 3 RGB, 4 CMYK) written by libjpeg with options the project's
// encoder does not set: progressive scans, arithmetic coding. Errors end the program (libjpeg's
// default error handler): the seeds are fixed, so an error here is a bug in this file.
std::string special_jpeg(int height, int width, int components, bool progressive, bool arithmetic) {
  jpeg_compress_struct cinfo{};
  jpeg_error_mgr error{};
  cinfo.err = jpeg_std_error(&error);
  jpeg_create_compress(&cinfo);
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&cinfo, &buffer, &size);
  cinfo.image_width = width;
  cinfo.image_height = height;
  cinfo.input_components = components;
  cinfo.in_color_space = components == 1 ? JCS_GRAYSCALE : components == 3 ? JCS_RGB : JCS_CMYK;
  jpeg_set_defaults(&cinfo);
  if (progressive) jpeg_simple_progression(&cinfo);
  cinfo.arith_code = arithmetic ? TRUE : FALSE;
  jpeg_start_compress(&cinfo, TRUE);
  std::vector<uint8_t> row(static_cast<size_t>(width) * components);
  while (cinfo.next_scanline < cinfo.image_height) {
    for (size_t i = 0; i < row.size(); ++i) row[i] = static_cast<uint8_t>(i * 29 + cinfo.next_scanline * 13);
    JSAMPROW rows[1] = {row.data()};
    jpeg_write_scanlines(&cinfo, rows, 1);
  }
  jpeg_finish_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  std::string bytes(reinterpret_cast<const char*>(buffer), size);
  std::free(buffer);
  return bytes;
}

// Small images: PNG grey, grey + alpha, RGB, RGBA, 16-bit, interlaced, palette; JPEG grey and RGB.
bool write_images(const fs::path& dir) {
  constexpr int64_t h = 6, w = 5;
  std::vector<uint8_t> pixels(h * w * 4);
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<uint8_t>(i * 37 + 11);
  bool ok = true;
  for (int channels = 1; channels <= 4; ++channels)
    ok &= write_file(dir / ("png_c" + std::to_string(channels) + ".png"),
                     data::encode_png(h, w, channels, pixels.data()));
  ok &= write_file(dir / "png_c3_16bit.png", data::encode_png(h, w, 3, pixels.data(), 16));
  ok &= write_file(dir / "png_c1_16bit_interlaced.png", data::encode_png(h, w, 1, pixels.data(), 16, true));
  ok &= write_file(dir / "png_c4_interlaced.png", data::encode_png(h, w, 4, pixels.data(), 8, true));
  std::vector<uint8_t> indices(h * w);
  for (size_t i = 0; i < indices.size(); ++i) indices[i] = static_cast<uint8_t>(i % 3);
  const std::vector<uint8_t> palette = {0, 0, 0, 255, 0, 0, 9, 99, 199};
  ok &= write_file(dir / "png_palette.png", data::encode_png_palette(h, w, indices.data(), palette));
  ok &= write_file(dir / "jpeg_grey.jpg", data::encode_jpeg(h, w, 1, pixels.data()));
  ok &= write_file(dir / "jpeg_rgb.jpg", data::encode_jpeg(h, w, 3, pixels.data()));
  const std::vector<uint8_t> flat(17 * 9 * 3, 128);  // more than one 8x8 block, low quality
  ok &= write_file(dir / "jpeg_rgb_q20.jpg", data::encode_jpeg(17, 9, 3, flat.data(), 20));
  ok &= write_file(dir / "jpeg_rgb_progressive.jpg", special_jpeg(19, 11, 3, true, false));
  ok &= write_file(dir / "jpeg_grey_progressive.jpg", special_jpeg(9, 8, 1, true, false));
  ok &= write_file(dir / "jpeg_rgb_arithmetic.jpg", special_jpeg(10, 12, 3, false, true));
  ok &= write_file(dir / "jpeg_rgb_progressive_arithmetic.jpg", special_jpeg(8, 16, 3, true, true));
  ok &= write_file(dir / "jpeg_cmyk.jpg", special_jpeg(8, 8, 4, false, false));  // refused: CMYK
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_write_seeds DIR (writes DIR/checkpoint/ and DIR/image/)\n");
    return 2;
  }
  const fs::path dir = argv[1];
  fs::create_directories(dir / "checkpoint");
  fs::create_directories(dir / "image");
  return write_checkpoints(dir / "checkpoint") && write_images(dir / "image") ? 0 : 1;
}
