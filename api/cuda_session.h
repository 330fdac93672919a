// The CUDA session (built only with the CUDA backend): Session::load hands the
// model here when SessionOptions::device is kCuda.
#pragma once

#include <memory>

#include <string>
#include "ucudnn/ucudnn.h"

namespace ucudnn {

// Creates the CUDA context, loads the graph in the session's layout and plans
// it (a saved plan; the undivided policy with cuDNN's algorithm search within
// options.workspace_bytes per layer; or wr/wd from the benchmark database;
// Layout::kAuto plans both layouts and keeps the one predicted faster), uploads
// the weights and prepares every kernel.
Expected<std::unique_ptr<Session>> create_cuda_session(const std::string& model_path, const SessionOptions& options);

}  // namespace ucudnn
