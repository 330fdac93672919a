// Images for training (training/data): PNG and JPEG decoding into RGB (every PNG colour type,
// exact values; JPEG within its loss), corrupt and truncated files refused, torchvision's
// transforms against values computed with torchvision 0.14 and by hand, and ImageFolder's class
// and file order on folders written at test time.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/support/temp_dir.h"
#include "tests/test_paths.h"
#include "training/data/image_decode.h"
#include "training/data/image_encode.h"
#include "training/data/image_folder.h"
#include "training/data/transforms.h"

namespace ucudnn::data {
namespace {

using ucudnn_test::TempDir;

// height x width x channels bytes with value (37·y + 11·x + 71·c) mod 256.
std::vector<uint8_t> pattern(int64_t height, int64_t width, int channels) {
  std::vector<uint8_t> pixels;
  for (int64_t y = 0; y < height; ++y)
    for (int64_t x = 0; x < width; ++x)
      for (int c = 0; c < channels; ++c) pixels.push_back(static_cast<uint8_t>((37 * y + 11 * x + 71 * c) % 256));
  return pixels;
}

// A smooth image (JPEG keeps it within a few levels).
std::vector<uint8_t> gradient(int64_t height, int64_t width, int channels) {
  std::vector<uint8_t> pixels;
  for (int64_t y = 0; y < height; ++y)
    for (int64_t x = 0; x < width; ++x)
      for (int c = 0; c < channels; ++c) pixels.push_back(static_cast<uint8_t>(40 + 4 * y + 3 * x + 20 * c));
  return pixels;
}

RgbImage decode(const std::string& bytes) {
  auto image = decode_image(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "fixture");
  EXPECT_TRUE(image.has_value()) << image.status().to_string();
  return image.has_value() ? *image : RgbImage{};
}

void write_file(const std::string& path, const std::string& bytes) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

// ---- decoding ---------------------------------------------------------------------------------

TEST(DataImageDecode, PngColourTypesBecomeRgbExactly) {
  const int64_t h = 5, w = 7;
  const std::vector<uint8_t> rgb = pattern(h, w, 3);
  struct Case {
    const char* name;
    int channels, bit_depth;
    bool interlaced;
  };
  for (const Case& c : {Case{"rgb", 3, 8, false}, Case{"rgb16", 3, 16, false}, Case{"rgb-adam7", 3, 8, true},
                        Case{"grey", 1, 8, false}, Case{"grey16", 1, 16, false}, Case{"grey-alpha", 2, 8, false},
                        Case{"rgba", 4, 8, false}}) {
    SCOPED_TRACE(c.name);
    const std::vector<uint8_t> source = pattern(h, w, c.channels);
    auto png = encode_png(h, w, c.channels, source.data(), c.bit_depth, c.interlaced);
    ASSERT_TRUE(png.has_value()) << png.status().to_string();
    const RgbImage image = decode(*png);
    ASSERT_EQ(image.height, h);
    ASSERT_EQ(image.width, w);
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x)
        for (int k = 0; k < 3; ++k) {
          // Grey is replicated; alpha (the last channel of 2 and 4) is dropped, not composited.
          const int from = c.channels <= 2 ? 0 : k;
          ASSERT_EQ(image.at(y, x, k), source[(y * w + x) * c.channels + from]) << y << "," << x << "," << k;
        }
  }
}

TEST(DataImageDecode, PngPaletteIsExpanded) {
  const std::vector<uint8_t> palette = {255, 0, 0, 0, 128, 0, 10, 20, 30};
  const std::vector<uint8_t> indices = {0, 1, 2, 2, 1, 0};
  auto png = encode_png_palette(2, 3, indices.data(), palette);
  ASSERT_TRUE(png.has_value()) << png.status().to_string();
  const RgbImage image = decode(*png);
  ASSERT_EQ(image.pixels.size(), 18u);
  for (size_t i = 0; i < indices.size(); ++i)
    for (int k = 0; k < 3; ++k) EXPECT_EQ(image.pixels[i * 3 + k], palette[indices[i] * 3 + k]);
}

TEST(DataImageDecode, JpegRgbAndGreyDecodeCloseToTheSource) {
  const int64_t h = 16, w = 24;
  for (int channels : {3, 1}) {
    SCOPED_TRACE(std::to_string(channels) + " channels");
    const std::vector<uint8_t> source = gradient(h, w, channels);
    auto jpeg = encode_jpeg(h, w, channels, source.data(), 100);
    ASSERT_TRUE(jpeg.has_value()) << jpeg.status().to_string();
    const RgbImage image = decode(*jpeg);
    ASSERT_EQ(image.height, h);
    ASSERT_EQ(image.width, w);
    int worst = 0;
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x)
        for (int k = 0; k < 3; ++k) {
          const int expected = source[(y * w + x) * channels + (channels == 1 ? 0 : k)];
          worst = std::max(worst, std::abs(image.at(y, x, k) - expected));
          if (channels == 1) {
            ASSERT_EQ(image.at(y, x, k), image.at(y, x, 0));  // grey replicated
          }
        }
    EXPECT_LE(worst, 4);
  }
}

// Every truncation of a valid file, and a damaged one, is an error naming the file.
TEST(DataImageDecode, TruncatedAndCorruptFilesAreRefused) {
  const std::vector<uint8_t> source = gradient(16, 16, 3);
  auto png = encode_png(16, 16, 3, source.data());
  auto jpeg = encode_jpeg(16, 16, 3, source.data(), 90);
  ASSERT_TRUE(png.has_value() && jpeg.has_value());
  for (const std::string* file : {&*png, &*jpeg}) {
    for (size_t length = 0; length < file->size(); ++length) {
      auto image = decode_image(reinterpret_cast<const uint8_t*>(file->data()), length, "cut.img");
      ASSERT_FALSE(image.has_value()) << "a file cut to " << length << " of " << file->size() << " bytes decoded";
      EXPECT_NE(image.status().message().find("cut.img"), std::string::npos) << image.status().to_string();
    }
  }
  // A flipped bit in the PNG's image data: the chunk's CRC no longer matches.
  std::string damaged = *png;
  damaged[damaged.size() - 20] ^= 0x10;
  auto image = decode_image(reinterpret_cast<const uint8_t*>(damaged.data()), damaged.size(), "damaged.png");
  ASSERT_FALSE(image.has_value());
  EXPECT_NE(image.status().message().find("damaged.png"), std::string::npos);
  // Bytes changed all over a JPEG: decoded or refused, never a crash or a wrong-sized image.
  for (size_t at = 0; at < jpeg->size(); at += 7) {
    std::string bytes = *jpeg;
    bytes[at] = static_cast<char>(bytes[at] ^ 0xA5);
    auto result = decode_image(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "flipped.jpg");
    if (result.has_value()) {
      EXPECT_EQ(result->pixels.size(), static_cast<size_t>(result->height * result->width * 3)) << "byte " << at;
    }
  }
  const std::string text = "GIF89a not supported";
  auto gif = decode_image(reinterpret_cast<const uint8_t*>(text.data()), text.size(), "x.gif");
  ASSERT_FALSE(gif.has_value());
  EXPECT_NE(gif.status().message().find("neither a JPEG nor a PNG"), std::string::npos);
}

// Files the image fuzzer turned up (docs/FUZZING.md), in tests/data/images/.
std::string image_file(const std::string& name) {
  std::ifstream in(ucudnn_test::source_dir() + "/tests/data/images/" + name, std::ios::binary);
  EXPECT_TRUE(in.good()) << name;
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A palette PNG with transparency (tRNS) decodes to its palette's colours, as PIL's convert("RGB").
TEST(DataImageDecode, PalettePngWithTransparencyIsRgb) {
  const RgbImage image = decode(image_file("palette_trns.png"));
  ASSERT_EQ(image.width, 4);
  ASSERT_EQ(image.height, 3);
  // PIL's Image.open(...).convert("RGB"): each row black, red, green, black.
  const std::vector<std::vector<uint8_t>> palette = {{0, 0, 0}, {255, 0, 0}, {0, 255, 0}};
  for (size_t p = 0; p < 12; ++p)
    for (size_t k = 0; k < 3; ++k) EXPECT_EQ(image.pixels[3 * p + k], palette[p % 3][k]) << "pixel " << p;
}

// A header that promises far more pixels than the file holds: refused, not filled with grey, and the
// PNG before its image memory is taken.
TEST(DataImageDecode, HeadersPromisingMoreThanTheFileHoldsAreRefused) {
  const std::string png = image_file("png_huge_header.png");  // 56 bytes, 1,000,000 x 134
  auto a = decode_image(reinterpret_cast<const uint8_t*>(png.data()), png.size(), "huge.png");
  ASSERT_FALSE(a.has_value());
  EXPECT_NE(a.status().message().find("more than the"), std::string::npos) << a.status().to_string();
  const std::string jpeg = image_file("jpeg_huge_header.jpg");  // 11585 x 11585, 8 bytes of scan data
  auto b = decode_image(reinterpret_cast<const uint8_t*>(jpeg.data()), jpeg.size(), "huge.jpg");
  ASSERT_FALSE(b.has_value());
  EXPECT_NE(b.status().message().find("huge.jpg"), std::string::npos) << b.status().to_string();
}

TEST(DataImageDecode, ReadImageFileNamesMissingFiles) {
  TempDir dir("data_image");
  auto missing = read_image_file(dir.file("absent.png"));
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find(dir.file("absent.png")), std::string::npos);
  EXPECT_FALSE(read_image_file(dir.path().string()).has_value());
}

// ---- transforms -------------------------------------------------------------------------------

// PyTorch's interpolate(bilinear, align_corners=False) of [[0, 100], [200, 40]] to 4 x 4.
TEST(DataTransforms, BilinearResizeMatchesPyTorch) {
  RgbImage image{2, 2, {0, 0, 0, 100, 100, 100, 200, 200, 200, 40, 40, 40}};
  std::vector<float> out(3 * 16);
  resize_window(image, {0, 0, 2, 2}, 4, 4, {0, 0, 4, 4}, out.data());
  const float expected[16] = {0, 25, 75, 100, 50, 58.75, 76.25, 85, 150, 126.25, 78.75, 55, 200, 160, 80, 40};
  for (int c = 0; c < 3; ++c)
    for (int i = 0; i < 16; ++i) EXPECT_NEAR(out[c * 16 + i] * 255.0f, expected[i], 1e-4) << c << "," << i;
  // A window of the resized image is that part of it; a box resizes only its own pixels.
  std::vector<float> window(3 * 4);
  resize_window(image, {0, 0, 2, 2}, 4, 4, {1, 1, 2, 2}, window.data());
  EXPECT_NEAR(window[0] * 255.0f, 58.75f, 1e-4);
  EXPECT_NEAR(window[3] * 255.0f, 78.75f, 1e-4);
  std::vector<float> column(3 * 2);
  resize_window(image, {0, 1, 2, 1}, 2, 1, {0, 0, 2, 1}, column.data());
  EXPECT_NEAR(column[0] * 255.0f, 100.0f, 1e-4);
  EXPECT_NEAR(column[1] * 255.0f, 40.0f, 1e-4);
}

// torchvision 0.14 on the float tensor of a 5 x 7 pattern image: Resize(4, antialias=False) →
// CenterCrop(4) → Normalize(ImageNet). The crop's left edge is round(0.5) = 0 (half to even).
TEST(DataTransforms, EvalRecipeMatchesTorchvision) {
  const std::vector<uint8_t> pixels = pattern(5, 7, 3);
  const RgbImage image{5, 7, pixels};
  const float expected[48] = {
      -2.0010276, -1.7373064, -1.473585,  -1.2098639, -1.2090076, -0.9452865, -0.6815653, -0.4178441,
      -0.4169878, -0.1532666, 0.1104547,  0.3741758,  0.3750322,  0.6387533,  0.9024745,  1.1661959,
      -0.6732318, -0.4036239, -0.1340161, 0.1355918,  0.1364671,  0.4060751,  0.6756829,  0.9452906,
      0.9461661,  1.2157738,  1.4853816,  1.7549894,  1.7558649,  2.0254726,  2.2950804,  -1.3568803,
      0.7894555,  1.057865,   1.3262745,  1.5946842,  1.5955555,  1.8639654,  2.1323745,  0.7275819,
      1.8439218,  -0.1186056, 0.149804,   -1.254989,  -0.8079302, -0.985708,  -0.7172984, -0.4488888};
  // size 4: the short side becomes 4 · 256 / 224 = 4 (integer division), the long one int(4 · 7 / 5) = 5.
  EXPECT_EQ(resize_short_side(5, 7, 4), (std::array<int64_t, 2>{4, 5}));
  EXPECT_EQ(resize_short_side(300, 200, 256), (std::array<int64_t, 2>{384, 256}));
  std::vector<float> out(48);
  apply_transforms(image, {.size = 4, .train = false}, 0, out.data());
  for (int i = 0; i < 48; ++i) EXPECT_NEAR(out[i], expected[i], 2e-5) << "element " << i;
}

TEST(DataTransforms, CenterCropRoundsHalvesToEven) {
  EXPECT_EQ(center_crop_box(4, 5, 4).left, 0);  // round(0.5) = 0
  EXPECT_EQ(center_crop_box(4, 7, 4).left, 2);  // round(1.5) = 2
  EXPECT_EQ(center_crop_box(4, 9, 4).left, 2);  // round(2.5) = 2
  EXPECT_EQ(center_crop_box(10, 4, 4).top, 3);
}

TEST(DataTransforms, RandomResizedCropBoxesFollowTheirRanges) {
  int inside_scale = 0;
  for (uint64_t seed = 0; seed < 500; ++seed) {
    SampleRng rng(seed);
    const CropBox box = random_resized_crop_box(300, 400, rng);
    ASSERT_GE(box.top, 0);
    ASSERT_GE(box.left, 0);
    ASSERT_GT(box.height, 0);
    ASSERT_GT(box.width, 0);
    ASSERT_LE(box.top + box.height, 300);
    ASSERT_LE(box.left + box.width, 400);
    const double area = static_cast<double>(box.height) * box.width / (300.0 * 400.0);
    const double aspect = static_cast<double>(box.width) / box.height;
    // Rounding w and h moves the area and the aspect a little past the ranges' edges.
    EXPECT_GE(area, 0.075);
    EXPECT_LE(aspect, 4.0 / 3.0 * 1.06);
    EXPECT_GE(aspect, 3.0 / 4.0 / 1.06);
    inside_scale += area < 0.5 ? 1 : 0;
  }
  EXPECT_GT(inside_scale, 100);  // scale is uniform in (0.08, 1): about half the boxes are small
  // A 1 x 100 strip: no attempt fits, so the fallback — the central crop at the widest ratio.
  SampleRng rng(7);
  const CropBox strip = random_resized_crop_box(1, 100, rng);
  EXPECT_EQ(strip.top, 0);
  EXPECT_EQ(strip.height, 1);
  EXPECT_EQ(strip.width, 1);  // round(1 · 4/3)
  EXPECT_EQ(strip.left, 49);  // (100 − 1) // 2
}

TEST(DataTransforms, TrainRecipeNormalisesAndFlipsHalfTheTime) {
  // A constant image: every crop and flip gives (v / 255 − mean[c]) / std[c].
  RgbImage flat{20, 30, {}};
  for (int i = 0; i < 20 * 30; ++i) flat.pixels.insert(flat.pixels.end(), {51, 102, 204});
  std::vector<float> out(3 * 8 * 8);
  apply_transforms(flat, {.size = 8, .train = true}, 3, out.data());
  const float values[3] = {51, 102, 204};
  for (int c = 0; c < 3; ++c)
    for (int i = 0; i < 64; ++i)
      ASSERT_NEAR(out[c * 64 + i], (values[c] / 255.0f - kImageNetMean[c]) / kImageNetStd[c], 1e-5);
  // Left half dark, right half bright: a flipped output is brighter on its left.
  RgbImage halves{16, 16, {}};
  for (int y = 0; y < 16; ++y)
    for (int x = 0; x < 16; ++x) halves.pixels.insert(halves.pixels.end(), 3, static_cast<uint8_t>(x < 8 ? 0 : 255));
  int flipped = 0;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    std::vector<float> a(3 * 16), b(3 * 16);
    apply_transforms(halves, {.size = 4, .train = true}, seed, a.data());
    apply_transforms(halves, {.size = 4, .train = true}, seed, b.data());
    ASSERT_EQ(a, b) << "seed " << seed << ": the same seed gave different outputs";
    flipped += a[0] > a[3] ? 1 : 0;
  }
  EXPECT_GT(flipped, 60);
  EXPECT_LT(flipped, 140);
}

// ---- ImageFolder --------------------------------------------------------------------------------

// root/{train,val}/<class>/...: PNG and JPEG files, a nested folder, a file that is not an image.
void write_folder(const TempDir& dir) {
  const std::vector<uint8_t> rgb = gradient(12, 10, 3), grey = gradient(9, 14, 1);
  const std::string png = *encode_png(12, 10, 3, rgb.data());
  const std::string jpeg = *encode_jpeg(9, 14, 1, grey.data());
  for (const std::string split : {"train", "val"}) {
    write_file(dir.file(split + "/dog/b.png"), png);
    write_file(dir.file(split + "/dog/A.JPG"), jpeg);
    write_file(dir.file(split + "/dog/nested/c.jpeg"), jpeg);
    write_file(dir.file(split + "/dog/notes.txt"), "not an image");
    write_file(dir.file(split + "/Zebra/z.png"), png);
    write_file(dir.file(split + "/cat/x.png"), png);
  }
}

TEST(DataImageFolder, ClassesAndFilesInTorchvisionOrder) {
  TempDir dir("data_folder");
  write_folder(dir);
  auto set = ImageFolderDataset::open(dir.path().string(), Split::kTrain, {.size = 6});
  ASSERT_TRUE(set.has_value()) << set.status().to_string();
  EXPECT_EQ((*set)->classes(), (std::vector<std::string>{"Zebra", "cat", "dog"}));  // byte order
  const std::string root = dir.file("train");
  EXPECT_EQ((*set)->files(), (std::vector<std::string>{root + "/Zebra/z.png", root + "/cat/x.png",
                                                        root + "/dog/A.JPG", root + "/dog/b.png",
                                                        root + "/dog/nested/c.jpeg"}));
  EXPECT_EQ((*set)->labels(), (std::vector<int64_t>{0, 1, 2, 2, 2}));
  EXPECT_EQ((*set)->image_shape(), (Shape{3, 6, 6}));
  EXPECT_EQ((*set)->num_classes(), 3);
  for (int64_t i = 0; i < (*set)->size(); ++i) {
    std::vector<float> out(3 * 36, 1e9f);
    int64_t label = -1;
    ASSERT_TRUE((*set)->load(i, 11, out.data(), &label).is_ok()) << "sample " << i;
    EXPECT_EQ(label, (*set)->labels()[static_cast<size_t>(i)]);
    for (float v : out) ASSERT_TRUE(std::abs(v) < 3.0f) << "sample " << i << ": " << v;  // normalised [0, 1]
  }
}

TEST(DataImageFolder, EvalSplitMatchesTheTransformOfTheDecodedFile) {
  TempDir dir("data_folder");
  write_folder(dir);
  auto set = ImageFolderDataset::open(dir.path().string(), Split::kVal, {.size = 6});
  ASSERT_TRUE(set.has_value()) << set.status().to_string();
  std::vector<float> loaded(3 * 36), direct(3 * 36);
  int64_t label = -1;
  ASSERT_TRUE((*set)->load(2, 0, loaded.data(), &label).is_ok());  // dog/A.JPG
  auto image = read_image_file(dir.file("val/dog/A.JPG"));
  ASSERT_TRUE(image.has_value());
  apply_transforms(*image, {.size = 6, .train = false}, 0, direct.data());
  EXPECT_EQ(loaded, direct);
  std::vector<float> again(3 * 36);
  ASSERT_TRUE((*set)->load(2, 12345, again.data(), &label).is_ok());
  EXPECT_EQ(loaded, again);  // eval transforms draw nothing
}

TEST(DataImageFolder, ProblemsAreNamed) {
  TempDir dir("data_folder");
  write_folder(dir);
  const std::string root = dir.path().string();
  // val lists a class train lacks.
  std::filesystem::copy(dir.file("val/cat"), dir.file("val/cow"));
  auto mismatch = ImageFolderDataset::open(root, Split::kVal);
  ASSERT_FALSE(mismatch.has_value());
  EXPECT_NE(mismatch.status().message().find("same class directories"), std::string::npos);
  // A class without images.
  std::filesystem::create_directories(dir.file("train/empty"));
  write_file(dir.file("train/empty/readme.md"), "nothing");
  auto empty = ImageFolderDataset::open(root, Split::kTrain);
  ASSERT_FALSE(empty.has_value());
  EXPECT_NE(empty.status().message().find(dir.file("train/empty")), std::string::npos);
  std::filesystem::remove_all(dir.file("train/empty"));
  // A corrupt file fails when loaded, naming it.
  write_file(dir.file("train/cat/x.png"), "\x89PNG\r\n\x1a\n broken");
  auto set = ImageFolderDataset::open(root, Split::kTrain, {.size = 4});
  ASSERT_TRUE(set.has_value()) << set.status().to_string();
  std::vector<float> out(3 * 16);
  int64_t label = -1;
  const Status status = (*set)->load(1, 0, out.data(), &label);
  ASSERT_FALSE(status.is_ok());
  EXPECT_NE(status.message().find(dir.file("train/cat/x.png")), std::string::npos) << status.to_string();
  // No such split.
  auto missing = ImageFolderDataset::open(dir.file("nowhere"), Split::kTrain);
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace ucudnn::data
