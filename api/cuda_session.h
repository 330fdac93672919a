// The CUDA session (built only with the CUDA backend): Session::load hands the
// imported graph here when SessionOptions::device is kCuda.
#pragma once

#include <memory>

#include "runtime/ir/graph.h"
#include "ucudnn/ucudnn.h"

namespace ucudnn {

// Creates the CUDA context, plans (a saved plan; the undivided policy with
// cuDNN's algorithm search within options.workspace_bytes per layer; or wr/wd
// from the benchmark database), uploads the weights and prepares every kernel.
// Inputs and outputs are host tensors.
Expected<std::unique_ptr<Session>> create_cuda_session(ir::Graph graph, const SessionOptions& options);

}  // namespace ucudnn
