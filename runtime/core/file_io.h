// Writing files so that nothing already written is lost: the bytes go to a new
// temporary file beside the destination, which is renamed over it only once
// complete. A reader sees the old file or the new one, never half of one. And where
// ucudnn's caches live.
#pragma once

#include <string>

#include "runtime/core/status.h"

namespace ucudnn {

// Writes `bytes` to `path` atomically (mode 0644). IoError naming the file on failure;
// the destination is then untouched and the temporary file removed.
Status write_file_atomically(const std::string& path, const std::string& bytes);

// The folder of what ucudnn caches for the user (the benchmark database, generated kernels):
// $XDG_CACHE_HOME/ucudnn when that is an absolute path, else ~/.cache/ucudnn, else .cache/ucudnn.
std::string user_cache_dir();

}  // namespace ucudnn
