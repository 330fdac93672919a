// write_file_atomically (see file_io.h): mkstemp beside the destination, write,
// fsync, close, chmod 0644, rename, fsync the folder (the rename itself survives a crash).
#include "runtime/core/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace ucudnn {

Status write_file_atomically(const std::string& path, const std::string& bytes) {
  std::string tmp = path + ".tmp-XXXXXX";
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) return io_error("cannot create a temporary file next to '" + path + "': " + std::strerror(errno));
  auto fail = [&](const std::string& what) {
    const std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    return io_error(what + ": " + why);
  };
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t w = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      ::close(fd);
      return fail("writing '" + tmp + "' (for '" + path + "') failed");
    }
    done += static_cast<size_t>(w);
  }
  if (::fsync(fd) != 0) {
    ::close(fd);
    return fail("flushing '" + tmp + "' (for '" + path + "') to disk failed");
  }
  if (::close(fd) != 0) return fail("writing '" + tmp + "' (for '" + path + "') failed");
  ::chmod(tmp.c_str(), 0644);  // mkstemp creates 0600; these are ordinary files
  if (std::rename(tmp.c_str(), path.c_str()) != 0) return fail("cannot rename '" + tmp + "' to '" + path + "'");
  const size_t slash = path.rfind('/');
  const std::string folder = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  const int dir = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY);
  if (dir >= 0) {  // best effort: the file is complete either way
    ::fsync(dir);
    ::close(dir);
  }
  return Status::ok();
}

std::string user_cache_dir() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && *xdg && std::filesystem::path(xdg).is_absolute()) return (std::filesystem::path(xdg) / "ucudnn").string();
  const char* home = std::getenv("HOME");
  if (home && *home) return (std::filesystem::path(home) / ".cache" / "ucudnn").string();
  return (std::filesystem::path(".cache") / "ucudnn").string();
}

}  // namespace ucudnn
