// The backend a session runs on, and the CPU backend's threads, for the api: both asked of
// runtime/backends/backends.h, which includes the backends' headers so that api/ does not; everything
// else asks a backend's capabilities (Note [backend capabilities]).
#pragma once

#include <memory>

#include "runtime/backend/backend.h"
#include "ucudnn/ucudnn.h"

namespace ucudnn {

// The CPU backend, or the CUDA backend on GPU 0 with `math`; Unsupported saying
// why when the build has no CUDA backend or no GPU is present.
Expected<std::unique_ptr<runtime::Backend>> make_backend(Device device, Math math);

// The CPU's thread count for what follows (the CPU benchmarker, the kernels), and its threads
// pinned or unpinned as options.pin_threads says (Note [pinned threads], runtime/cpu/cpu_registry.cc).
Status apply_cpu_thread_options(const SessionOptions& options);

}  // namespace ucudnn
