// Checkpoint files (format in checkpoint.h): a streaming writer that hashes what it writes and
// commits with fsync + rename, and a reader that checks each size against the bytes left in the
// file before it reads or allocates.
#include "training/checkpoint.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "runtime/core/fnv1a.h"

namespace ucudnn::training {

static_assert(std::endian::native == std::endian::little, "checkpoint files are written in host byte order");

namespace fs = std::filesystem;

namespace {

constexpr char kMagic[8] = {'U', 'C', 'D', 'N', 'C', 'K', 'P', 'T'};
constexpr uint32_t kMaxRank = 8;
constexpr int kOnnxFloat32 = 1, kOnnxInt64 = 7;
// The smallest tensor record: empty name, dtype, rank 0, one element of 4 bytes.
constexpr uint64_t kMinRecordBytes = 4 + 4 + 4 + 4;

// Writes a file through a temporary beside it; commit() makes it durable and renames it into place.
// Destroyed without a commit, it removes the temporary file.
class AtomicFile {
 public:
  explicit AtomicFile(std::string path) : path_(std::move(path)), tmp_(path_ + ".tmp-XXXXXX") {}
  ~AtomicFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_ && opened_) ::unlink(tmp_.c_str());
  }

  Status open() {
    fd_ = ::mkstemp(tmp_.data());
    if (fd_ < 0) return failure("cannot create a temporary file next to it");
    opened_ = true;
    return Status::ok();
  }

  // Appends bytes (buffered) and hashes them.
  Status write(const void* data, size_t n) {
    if (n == 0) return Status::ok();
    hash_.add(data, n);
    if (buffer_.size() + n > kBufferBytes) UCUDNN_RETURN_IF_ERROR(flush());
    if (n >= kBufferBytes) return write_fully(data, n);
    buffer_.append(static_cast<const char*>(data), n);
    return Status::ok();
  }
  template <typename T> Status write_value(T value) { return write(&value, sizeof value); }
  Status write_string(const std::string& text) {
    UCUDNN_RETURN_IF_ERROR(write_value(static_cast<uint32_t>(text.size())));
    return write(text.data(), text.size());
  }
  uint64_t hash() const { return hash_.hash; }

  // Flushes, fsyncs, renames the temporary file over the destination and fsyncs the folder.
  Status commit() {
    UCUDNN_RETURN_IF_ERROR(flush());
    if (::fsync(fd_) != 0) return failure("fsync of the temporary file failed");
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) return failure("closing the temporary file failed");
    ::chmod(tmp_.c_str(), 0644);  // mkstemp creates 0600; checkpoints are ordinary files
    if (std::rename(tmp_.c_str(), path_.c_str()) != 0) return failure("cannot rename '" + tmp_ + "' over it");
    committed_ = true;
    std::string dir = fs::path(path_).parent_path().string();
    const int dir_fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY);
    if (dir_fd >= 0) {  // the rename itself durable; a folder that cannot be opened keeps the page cache's word
      ::fsync(dir_fd);
      ::close(dir_fd);
    }
    return Status::ok();
  }

 private:
  static constexpr size_t kBufferBytes = 1 << 20;

  Status failure(const std::string& what) const {
    return io_error("writing checkpoint '" + path_ + "': " + what + ": " + std::strerror(errno));
  }
  Status write_fully(const void* data, size_t n) {
    const char* bytes = static_cast<const char*>(data);
    while (n > 0) {
      const ssize_t w = ::write(fd_, bytes, n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return failure("writing '" + tmp_ + "' failed");
      bytes += w;
      n -= static_cast<size_t>(w);
    }
    return Status::ok();
  }
  Status flush() {
    Status status = write_fully(buffer_.data(), buffer_.size());
    buffer_.clear();
    return status;
  }

  std::string path_, tmp_, buffer_;
  int fd_ = -1;
  bool opened_ = false, committed_ = false;
  Fnv1a hash_;
};

// The record's size: name, dtype, rank, dims, data.
uint64_t record_bytes(const std::string& name, const Tensor& t) {
  return 4 + name.size() + 4 + 4 + 8 * t.shape().size() + t.nbytes();
}

Status check_tensor(const std::string& path, const std::string& name, const Tensor& t) {
  const std::string what = "checkpoint '" + path + "': tensor '" + name + "' ";
  if (name.empty()) return invalid_argument("checkpoint '" + path + "': a tensor has an empty name");
  if (t.dtype() != DType::kFloat32 && t.dtype() != DType::kInt64)
    return invalid_argument(what + t.describe() + ": checkpoints hold float32 and int64 tensors only");
  if (t.empty()) return invalid_argument(what + t.describe() + " has no data");
  if (t.shape().size() > kMaxRank) return invalid_argument(what + t.describe() + " has rank above 8");
  return Status::ok();
}

// Reads the file front to back, each read checked against the bytes before the checksum.
class Reader {
 public:
  Reader(std::ifstream& in, std::string path, uint64_t end) : in_(in), path_(std::move(path)), end_(end) {}

  Status error(const std::string& what) const { return invalid_argument("checkpoint '" + path_ + "': " + what); }
  uint64_t offset() const { return offset_; }
  uint64_t remaining() const { return end_ - offset_; }

  Status read(void* dst, uint64_t n, const std::string& what) {
    if (n == 0) return Status::ok();
    if (n > remaining())
      return error(what + " needs " + std::to_string(n) + " bytes at offset " + std::to_string(offset_) + " but only " +
                   std::to_string(remaining()) + " remain before the checksum (truncated or corrupt file)");
    in_.read(static_cast<char*>(dst), static_cast<std::streamsize>(n));
    if (!in_) return io_error("checkpoint '" + path_ + "': reading " + what + " failed");
    hash_.add(dst, static_cast<size_t>(n));
    offset_ += n;
    return Status::ok();
  }
  template <typename T> Expected<T> value(const std::string& what) {
    T v{};
    UCUDNN_RETURN_IF_ERROR(read(&v, sizeof v, what));
    return v;
  }
  Expected<std::string> string(const std::string& what) {
    UCUDNN_ASSIGN_OR_RETURN(const uint32_t size, value<uint32_t>(what + "'s length"));
    if (size > remaining())
      return error(what + " claims " + std::to_string(size) + " bytes but only " + std::to_string(remaining()) +
                   " remain (corrupt file)");
    std::string text(size, '\0');
    UCUDNN_RETURN_IF_ERROR(read(text.data(), size, what));
    return text;
  }
  uint64_t hash() const { return hash_.hash; }

 private:
  std::ifstream& in_;
  std::string path_;
  uint64_t end_;
  uint64_t offset_ = 0;
  Fnv1a hash_;
};

Expected<Tensor> read_tensor(Reader& r, const std::string& what) {
  UCUDNN_ASSIGN_OR_RETURN(const uint32_t code, r.value<uint32_t>(what + "'s dtype"));
  if (code != kOnnxFloat32 && code != kOnnxInt64)
    return r.error(what + " has dtype code " + std::to_string(code) + "; checkpoints hold float32 (1) and int64 (7)");
  const DType dtype = code == kOnnxFloat32 ? DType::kFloat32 : DType::kInt64;
  UCUDNN_ASSIGN_OR_RETURN(const uint32_t rank, r.value<uint32_t>(what + "'s rank"));
  if (rank > kMaxRank) return r.error(what + " has rank " + std::to_string(rank) + " (at most 8)");
  Shape shape(rank);
  for (uint32_t d = 0; d < rank; ++d) {
    UCUDNN_ASSIGN_OR_RETURN(shape[d], r.value<int64_t>(what + "'s dims"));
    if (shape[d] < 0) return r.error(what + " has a negative dim " + std::to_string(shape[d]));
  }
  int64_t numel = 0;
  const uint64_t size = dtype_size(dtype);
  if (!checked_numel(shape, &numel) || static_cast<uint64_t>(numel) > r.remaining() / size)
    return r.error(what + " " + dtype_name(dtype) + shape_to_string(shape) + " needs more bytes than the " +
                   std::to_string(r.remaining()) + " left in the file (truncated or corrupt file)");
  UCUDNN_ASSIGN_OR_RETURN(Tensor tensor, Tensor::allocate_uninitialized(dtype, shape));
  UCUDNN_RETURN_IF_ERROR(r.read(tensor.raw(), tensor.nbytes(), what + "'s data"));
  return tensor;
}

Status read_body(Reader& r, Checkpoint& c) {
  UCUDNN_ASSIGN_OR_RETURN(c.step, r.value<int64_t>("the step"));
  UCUDNN_ASSIGN_OR_RETURN(c.epoch, r.value<int64_t>("the epoch"));
  UCUDNN_ASSIGN_OR_RETURN(const uint32_t rng_count, r.value<uint32_t>("the RNG state's length"));
  if (rng_count > r.remaining() / 8)
    return r.error("the RNG state claims " + std::to_string(rng_count) + " values; the file has room for " +
                   std::to_string(r.remaining() / 8));
  c.rng_state.resize(rng_count);
  UCUDNN_RETURN_IF_ERROR(r.read(c.rng_state.data(), uint64_t{8} * rng_count, "the RNG state"));
  UCUDNN_ASSIGN_OR_RETURN(c.graph_fingerprint, r.string("the graph fingerprint"));
  UCUDNN_ASSIGN_OR_RETURN(c.optimizer_config, r.string("the optimizer configuration"));
  UCUDNN_ASSIGN_OR_RETURN(const uint32_t count, r.value<uint32_t>("the tensor count"));
  if (count > r.remaining() / kMinRecordBytes)
    return r.error("the tensor count " + std::to_string(count) + " cannot fit in the " +
                   std::to_string(r.remaining()) + " bytes left (corrupt file)");
  for (uint32_t i = 0; i < count; ++i) {
    const std::string what = "tensor " + std::to_string(i) + " of " + std::to_string(count);
    UCUDNN_ASSIGN_OR_RETURN(std::string name, r.string(what + "'s name"));
    if (name.empty()) return r.error(what + " has an empty name");
    UCUDNN_ASSIGN_OR_RETURN(Tensor tensor, read_tensor(r, what + " ('" + name + "')"));
    if (!c.tensors.emplace(name, std::move(tensor)).second)
      return r.error("tensor '" + name + "' appears twice");
  }
  if (r.remaining() != 0)
    return r.error(std::to_string(r.remaining()) + " unexplained bytes after the last tensor (corrupt file)");
  return Status::ok();
}

}  // namespace

Status save_checkpoint(const std::string& path, const Checkpoint& checkpoint) {
  const auto fits_u32 = [](size_t n) { return n <= UINT32_MAX; };
  if (!fits_u32(checkpoint.rng_state.size()) || !fits_u32(checkpoint.graph_fingerprint.size()) ||
      !fits_u32(checkpoint.optimizer_config.size()) || !fits_u32(checkpoint.tensors.size()))
    return invalid_argument("checkpoint '" + path + "': more than 2^32 tensors, RNG values or string bytes");
  uint64_t size = sizeof kMagic + 4 + 8 + 8 + 8 + 4 + 8 * checkpoint.rng_state.size() + 4 +
                  checkpoint.graph_fingerprint.size() + 4 + checkpoint.optimizer_config.size() + 4 + 8;
  for (const auto& [name, tensor] : checkpoint.tensors) {
    UCUDNN_RETURN_IF_ERROR(check_tensor(path, name, tensor));
    if (!fits_u32(name.size())) return invalid_argument("checkpoint '" + path + "': a tensor name over 4 GiB");
    size += record_bytes(name, tensor);
  }

  AtomicFile file(path);
  UCUDNN_RETURN_IF_ERROR(file.open());
  UCUDNN_RETURN_IF_ERROR(file.write(kMagic, sizeof kMagic));
  UCUDNN_RETURN_IF_ERROR(file.write_value(kCheckpointVersion));
  UCUDNN_RETURN_IF_ERROR(file.write_value(size));
  UCUDNN_RETURN_IF_ERROR(file.write_value(checkpoint.step));
  UCUDNN_RETURN_IF_ERROR(file.write_value(checkpoint.epoch));
  UCUDNN_RETURN_IF_ERROR(file.write_value(static_cast<uint32_t>(checkpoint.rng_state.size())));
  UCUDNN_RETURN_IF_ERROR(file.write(checkpoint.rng_state.data(), 8 * checkpoint.rng_state.size()));
  UCUDNN_RETURN_IF_ERROR(file.write_string(checkpoint.graph_fingerprint));
  UCUDNN_RETURN_IF_ERROR(file.write_string(checkpoint.optimizer_config));
  UCUDNN_RETURN_IF_ERROR(file.write_value(static_cast<uint32_t>(checkpoint.tensors.size())));
  for (const auto& [name, tensor] : checkpoint.tensors) {
    UCUDNN_RETURN_IF_ERROR(file.write_string(name));
    UCUDNN_RETURN_IF_ERROR(file.write_value(static_cast<uint32_t>(dtype_to_onnx(tensor.dtype()))));
    UCUDNN_RETURN_IF_ERROR(file.write_value(static_cast<uint32_t>(tensor.shape().size())));
    for (int64_t d : tensor.shape()) UCUDNN_RETURN_IF_ERROR(file.write_value(d));
    UCUDNN_RETURN_IF_ERROR(file.write(tensor.raw(), tensor.nbytes()));
  }
  UCUDNN_RETURN_IF_ERROR(file.write_value(file.hash()));
  return file.commit();
}

Expected<Checkpoint> load_checkpoint(const std::string& path) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) return not_found("checkpoint '" + path + "' does not exist");
  if (!fs::is_regular_file(st)) return invalid_argument("checkpoint '" + path + "' is not a file");
  const uint64_t actual = fs::file_size(path, ec);
  if (ec) return io_error("cannot read the size of checkpoint '" + path + "'");
  std::ifstream in(path, std::ios::binary);
  if (!in) return io_error("cannot open checkpoint '" + path + "'");

  Reader header(in, path, actual);
  char magic[sizeof kMagic];
  UCUDNN_RETURN_IF_ERROR(header.read(magic, sizeof magic, "the magic number"));
  if (std::memcmp(magic, kMagic, sizeof kMagic) != 0)
    return header.error("not a ucudnn checkpoint (wrong magic number)");
  UCUDNN_ASSIGN_OR_RETURN(const uint32_t version, header.value<uint32_t>("the format version"));
  if (version > kCheckpointVersion || version == 0)
    return unsupported("checkpoint '" + path + "' has format version " + std::to_string(version) +
                       "; this build reads version " + std::to_string(kCheckpointVersion));
  UCUDNN_ASSIGN_OR_RETURN(const uint64_t declared, header.value<uint64_t>("the file size"));
  if (declared != actual)
    return header.error("the header says " + std::to_string(declared) + " bytes but the file has " +
                        std::to_string(actual) + (actual < declared ? " (truncated)" : " (corrupt)"));
  if (declared < header.offset() + 8) return header.error("too short to hold a checksum (corrupt file)");

  // The body, hashed from the first byte on: restart the hash with the header's bytes.
  in.seekg(0);
  Reader r(in, path, declared - 8);
  char prefix[sizeof kMagic + 4 + 8];
  UCUDNN_RETURN_IF_ERROR(r.read(prefix, sizeof prefix, "the header"));
  Checkpoint checkpoint;
  UCUDNN_RETURN_IF_ERROR(read_body(r, checkpoint));
  uint64_t stored = 0;
  in.read(reinterpret_cast<char*>(&stored), sizeof stored);
  if (!in) return io_error("checkpoint '" + path + "': reading the checksum failed");
  if (stored != r.hash()) return r.error("checksum mismatch: the file is corrupt");
  return checkpoint;
}

}  // namespace ucudnn::training
