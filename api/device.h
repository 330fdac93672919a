// The backend a session runs on: the api's one question to the build about CUDA
// (with gpu_tensor.cc, which holds device memory itself).
#pragma once

#include <memory>

#include "runtime/backend/backend.h"
#include "ucudnn/ucudnn.h"

namespace ucudnn {

// The CPU backend, or the CUDA backend on GPU 0 with `math`; Unsupported saying
// why when the build has no CUDA backend or no GPU is present.
Expected<std::unique_ptr<runtime::Backend>> make_backend(Device device, Math math);

}  // namespace ucudnn
