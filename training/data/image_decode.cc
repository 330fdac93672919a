// Reading an image file and choosing its decoder by its first bytes (see image_decode.h).
#include "training/data/image_decode.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>

namespace ucudnn::data {
namespace {

bool starts_with(const uint8_t* data, size_t size, const uint8_t* magic, size_t n) {
  return size >= n && std::memcmp(data, magic, n) == 0;
}

// Closes a file descriptor on destruction.
struct FileCloser {
  int fd;
  ~FileCloser() { ::close(fd); }
};

}  // namespace

Expected<RgbImage> decode_image(const uint8_t* data, size_t size, const std::string& name) {
  static constexpr uint8_t kJpeg[] = {0xFF, 0xD8, 0xFF};
  static constexpr uint8_t kPng[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  if (starts_with(data, size, kJpeg, sizeof kJpeg)) return decode_jpeg(data, size, name);
  if (starts_with(data, size, kPng, sizeof kPng)) return decode_png(data, size, name);
  return invalid_argument("image '" + name + "' is neither a JPEG nor a PNG (by its first bytes)");
}

Expected<RgbImage> read_image_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return errno == ENOENT ? not_found("image '" + path + "' does not exist")
                           : io_error("cannot open image '" + path + "': " + std::strerror(errno));
  FileCloser closer{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0) return io_error("cannot stat image '" + path + "': " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return invalid_argument("image '" + path + "' is not a regular file");
  if (st.st_size > kMaxImageFileBytes)
    return invalid_argument("image '" + path + "' is " + std::to_string(st.st_size) + " bytes, more than the " +
                            std::to_string(kMaxImageFileBytes) + " read at most");
  std::vector<uint8_t> bytes;
  try {
    bytes.resize(static_cast<size_t>(st.st_size));
  } catch (const std::bad_alloc&) {
    return out_of_memory("no memory to read image '" + path + "' (" + std::to_string(st.st_size) + " bytes)");
  }
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t got = ::read(fd, bytes.data() + done, bytes.size() - done);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return io_error("reading image '" + path + "' failed: " + std::strerror(errno));
    if (got == 0) return io_error("image '" + path + "' became shorter while it was read");
    done += static_cast<size_t>(got);
  }
  return decode_image(bytes.data(), bytes.size(), path);
}

}  // namespace ucudnn::data
