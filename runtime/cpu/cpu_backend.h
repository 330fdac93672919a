// The CPU backend (runtime/backend/backend.h) over the CPU kernel table
// (cpu_kernel.h): host memory, synchronous "streams" (one), events that are
// the time they were recorded at. Kernels run on the calling thread with
// OpenMP inside; `prepare` asks the kernel's pure workspace query.
#pragma once

#include <memory>

#include "runtime/backend/backend.h"

namespace ucudnn::cpu {

std::unique_ptr<runtime::Backend> make_cpu_backend();

// Workspace the CPU kernel of `node` needs for one call with a batch of
// `micro_batch` (input 0's leading dim replaced; 0 = the graph's) and `algorithm`
// (-1 = the kernel's default). What the optimizer plans non-convolution steps with.
size_t cpu_step_workspace(const ir::Graph& graph, const ir::Node& node, int64_t micro_batch, int algorithm);

}  // namespace ucudnn::cpu
