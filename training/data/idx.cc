// IDX files (see idx.h): read through zlib's gz* functions, which read gzip and plain files alike;
// the header first, then the data in chunks of at most kChunk bytes, then one more byte to catch
// data beyond what the header declares.
#include "training/data/idx.h"

#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

namespace ucudnn::data {
namespace {

constexpr size_t kChunk = size_t{16} << 20;
constexpr uint8_t kTypeUnsignedByte = 0x08;
// The largest data an IDX file may declare (far above MNIST's 47 MB; keeps sizes in int64).
constexpr uint64_t kMaxIdxBytes = uint64_t{1} << 40;

std::string hex32(uint32_t v) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%08x", v);
  return text;
}

// An open gz stream (plain files read through unchanged), closed on destruction.
class GzInput {
 public:
  explicit GzInput(std::string path) : path_(std::move(path)) {}
  ~GzInput() {
    if (file_ != nullptr) gzclose(file_);
  }
  GzInput(const GzInput&) = delete;
  GzInput& operator=(const GzInput&) = delete;

  Status open() {
    struct stat st;
    if (::stat(path_.c_str(), &st) != 0)
      return errno == ENOENT ? not_found("IDX file '" + path_ + "' does not exist")
                             : io_error("cannot open IDX file '" + path_ + "': " + std::strerror(errno));
    if (!S_ISREG(st.st_mode)) return invalid_argument("IDX file '" + path_ + "' is not a regular file");
    file_ = gzopen(path_.c_str(), "rb");
    if (file_ == nullptr) return io_error("cannot open IDX file '" + path_ + "': " + std::strerror(errno));
    gzbuffer(file_, 1 << 17);
    return Status::ok();
  }

  // Reads up to `n` bytes into dst; fewer only where the data ends. IoError naming the file when
  // the gzip stream is corrupt.
  Expected<size_t> read(void* dst, size_t n) {
    size_t done = 0;
    while (done < n) {
      const auto want = static_cast<unsigned>(std::min<size_t>(n - done, kChunk));
      const int got = gzread(file_, static_cast<char*>(dst) + done, want);
      if (got < 0) return io_error("IDX file '" + path_ + "' is not a valid gzip stream: " + error_text());
      done += static_cast<size_t>(got);
      if (static_cast<unsigned>(got) < want) break;
    }
    return done;
  }

  // zlib's description of the last error ("unexpected end of file" for a cut gzip stream), or "".
  std::string error_text() {
    int code = Z_OK;
    const char* text = gzerror(file_, &code);
    return code == Z_OK || text == nullptr ? std::string() : std::string(text);
  }

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  gzFile file_ = nullptr;
};

// Reads the header of an IDX file of unsigned bytes with `rank` dimensions ("what": "image"/"label").
Expected<std::vector<uint64_t>> read_header(GzInput& in, int rank, const char* what) {
  std::array<uint8_t, 4> magic{};
  UCUDNN_ASSIGN_OR_RETURN(size_t got, in.read(magic.data(), magic.size()));
  if (got < magic.size())
    return invalid_argument("IDX file '" + in.path() + "' is too short for an IDX header (" + std::to_string(got) +
                            " bytes)");
  const uint32_t value = (uint32_t{magic[0]} << 24) | (uint32_t{magic[1]} << 16) | (uint32_t{magic[2]} << 8) | magic[3];
  const uint32_t expected = (uint32_t{kTypeUnsignedByte} << 8) | static_cast<uint32_t>(rank);
  if (magic[0] != 0 || magic[1] != 0)
    return invalid_argument("'" + in.path() + "' is not an IDX file: it starts with " + hex32(value) + ", an IDX " +
                            what + " file with " + hex32(expected));
  if (magic[2] != kTypeUnsignedByte)
    return unsupported("IDX file '" + in.path() + "' holds values of type " + hex32(magic[2]) +
                       "; only unsigned bytes (type 0x08) are read");
  if (magic[3] != rank)
    return invalid_argument("IDX file '" + in.path() + "' has magic " + hex32(value) + " (" + std::to_string(magic[3]) +
                            " dimensions); an IDX " + what + " file has " + hex32(expected));
  std::vector<uint8_t> bytes(static_cast<size_t>(rank) * 4);
  UCUDNN_ASSIGN_OR_RETURN(got, in.read(bytes.data(), bytes.size()));
  if (got < bytes.size())
    return invalid_argument("IDX file '" + in.path() + "' ends inside its header (" + std::to_string(4 + got) + " of " +
                            std::to_string(4 + bytes.size()) + " bytes)");
  std::vector<uint64_t> dims(static_cast<size_t>(rank));
  for (size_t d = 0; d < dims.size(); ++d)
    dims[d] = (uint64_t{bytes[4 * d]} << 24) | (uint64_t{bytes[4 * d + 1]} << 16) | (uint64_t{bytes[4 * d + 2]} << 8) |
              bytes[4 * d + 3];
  return dims;
}

std::string dims_text(const std::vector<uint64_t>& dims) {
  std::string text;
  for (uint64_t d : dims) text += (text.empty() ? "" : " x ") + std::to_string(d);
  return text;
}

// Reads exactly the data the header declares (the product of `dims` bytes), then checks that
// nothing follows it.
Expected<std::vector<uint8_t>> read_data(GzInput& in, const std::vector<uint64_t>& dims) {
  uint64_t total = 1;
  for (uint64_t d : dims) {
    if (d != 0 && total > kMaxIdxBytes / d)
      return invalid_argument("IDX file '" + in.path() + "' declares " + dims_text(dims) +
                              " values, more than the 2^40 bytes read at most");
    total *= d;
  }
  std::vector<uint8_t> data;
  while (data.size() < total) {
    const size_t before = data.size();
    const size_t want = std::min<uint64_t>(total - before, kChunk);
    data.resize(before + want);
    UCUDNN_ASSIGN_OR_RETURN(size_t got, in.read(data.data() + before, want));
    if (got < want) {
      const std::string why = in.error_text();
      return invalid_argument("IDX file '" + in.path() + "' is truncated: its header declares " + dims_text(dims) +
                              " (" + std::to_string(total) + " bytes of data) but it holds " +
                              std::to_string(before + got) + (why.empty() ? "" : " (zlib: " + why + ")"));
    }
  }
  uint8_t extra = 0;
  UCUDNN_ASSIGN_OR_RETURN(size_t more, in.read(&extra, 1));
  if (more != 0)
    return invalid_argument("IDX file '" + in.path() + "' holds more data than its header declares (" +
                            dims_text(dims) + ", " + std::to_string(total) + " bytes)");
  // A gzip stream cut inside its trailer yields all the data, then zlib's "unexpected end of file".
  const std::string why = in.error_text();
  if (!why.empty()) return invalid_argument("IDX file '" + in.path() + "' is truncated: zlib: " + why);
  return data;
}

// The existing one of `dir/name` and `dir/name.gz`, plain first; NotFound naming both.
Expected<std::string> find_idx_file(const std::string& dir, const std::string& name) {
  struct stat st;
  for (const std::string& candidate : {dir + "/" + name, dir + "/" + name + ".gz"})
    if (::stat(candidate.c_str(), &st) == 0) return candidate;
  return not_found("no '" + name + "' or '" + name + ".gz' in '" + dir + "'");
}

}  // namespace

Expected<IdxImages> read_idx_images(const std::string& path) {
  GzInput in(path);
  UCUDNN_RETURN_IF_ERROR(in.open());
  UCUDNN_ASSIGN_OR_RETURN(std::vector<uint64_t> dims, read_header(in, 3, "image"));
  if (dims[1] == 0 || dims[2] == 0)
    return invalid_argument("IDX image file '" + path + "' declares images of " + std::to_string(dims[1]) + " x " +
                            std::to_string(dims[2]) + " pixels");
  IdxImages images;
  UCUDNN_ASSIGN_OR_RETURN(images.pixels, read_data(in, dims));
  images.count = static_cast<int64_t>(dims[0]);
  images.rows = static_cast<int64_t>(dims[1]);
  images.cols = static_cast<int64_t>(dims[2]);
  return images;
}

Expected<std::vector<uint8_t>> read_idx_labels(const std::string& path) {
  GzInput in(path);
  UCUDNN_RETURN_IF_ERROR(in.open());
  UCUDNN_ASSIGN_OR_RETURN(std::vector<uint64_t> dims, read_header(in, 1, "label"));
  return read_data(in, dims);
}

Expected<std::shared_ptr<IdxDataset>> IdxDataset::open(const std::string& images_path, const std::string& labels_path,
                                                       const IdxOptions& options) {
  if (!(options.std > 0) || !std::isfinite(options.std) || !std::isfinite(options.mean))
    return invalid_argument("IDX normalisation needs a finite mean and a positive std (got mean " +
                            std::to_string(options.mean) + ", std " + std::to_string(options.std) + ")");
  std::shared_ptr<IdxDataset> set(new IdxDataset());
  UCUDNN_ASSIGN_OR_RETURN(set->images_, read_idx_images(images_path));
  UCUDNN_ASSIGN_OR_RETURN(set->labels_, read_idx_labels(labels_path));
  if (set->images_.count == 0) return invalid_argument("IDX image file '" + images_path + "' holds no images");
  if (static_cast<int64_t>(set->labels_.size()) != set->images_.count)
    return invalid_argument("IDX files disagree: '" + images_path + "' holds " + std::to_string(set->images_.count) +
                            " images but '" + labels_path + "' holds " + std::to_string(set->labels_.size()) +
                            " labels");
  set->num_classes_ = *std::max_element(set->labels_.begin(), set->labels_.end()) + 1;
  set->shape_ = {1, set->images_.rows, set->images_.cols};
  set->mean_ = options.mean;
  set->std_ = options.std;
  set->source_ = images_path + ", " + labels_path;
  return set;
}

Expected<std::shared_ptr<IdxDataset>> IdxDataset::open_dir(const std::string& dir, Split split,
                                                           const IdxOptions& options) {
  const std::string prefix = split == Split::kTrain ? "train" : "t10k";
  UCUDNN_ASSIGN_OR_RETURN(std::string images, find_idx_file(dir, prefix + "-images-idx3-ubyte"));
  UCUDNN_ASSIGN_OR_RETURN(std::string labels, find_idx_file(dir, prefix + "-labels-idx1-ubyte"));
  return open(images, labels, options);
}

std::string IdxDataset::describe() const {
  return "IDX (" + source_ + "): " + std::to_string(size()) + " images " + shape_to_string(shape_) + ", " +
         std::to_string(num_classes_) + " classes, normalised with mean " + std::to_string(mean_) + ", std " +
         std::to_string(std_);
}

Status IdxDataset::load(int64_t index, uint64_t /*seed*/, float* dst, int64_t* label) const {
  if (index < 0 || index >= size())
    return invalid_argument("sample " + std::to_string(index) + " is outside the IDX data set (" +
                            std::to_string(size()) + " samples)");
  const int64_t numel = images_.rows * images_.cols;
  const uint8_t* src = images_.pixels.data() + index * numel;
  // As torchvision's ToTensor then Normalize, in float32: (x / 255 − mean) / std.
  for (int64_t i = 0; i < numel; ++i) dst[i] = (static_cast<float>(src[i]) / 255.0f - mean_) / std_;
  *label = labels_[static_cast<size_t>(index)];
  return Status::ok();
}

}  // namespace ucudnn::data
