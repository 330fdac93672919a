// TempDir: a fresh directory of its own under the system temp directory, removed
// with everything in it when the object goes out of scope — so a test leaves
// nothing behind whether it passes, fails an ASSERT or throws. Write permission
// is given back first, for tests that make files or directories read-only.
// Header-only, so any test binary can use it without linking ucudnn_test_support.
#pragma once

#include <stdlib.h>

#include <cerrno>
#include <filesystem>
#include <string>
#include <system_error>

namespace ucudnn_test {

class TempDir {
 public:
  // `prefix` names the test in the directory's name ("<tmp>/<prefix>.XXXXXX").
  explicit TempDir(const std::string& prefix) {
    std::string pattern = (std::filesystem::temp_directory_path() / (prefix + ".XXXXXX")).string();
    if (::mkdtemp(pattern.data()) == nullptr)
      throw std::filesystem::filesystem_error("mkdtemp", pattern, std::error_code(errno, std::generic_category()));
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    make_writable(path_);
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // The path of `name` inside the directory (not created).
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  static void make_writable(const std::filesystem::path& path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::permissions(path, fs::perms::owner_all, fs::perm_options::add, ec);
    if (!fs::is_directory(fs::symlink_status(path, ec))) return;
    for (const fs::directory_entry& entry : fs::directory_iterator(path, ec)) make_writable(entry.path());
  }

  std::filesystem::path path_;
};

}  // namespace ucudnn_test
