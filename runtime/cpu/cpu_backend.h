// The CPU backend (runtime/backend/backend.h) over the CPU kernel table
// (cpu_kernel.h): host memory, synchronous "streams" (one), events that are
// the time they were recorded at. Kernels run on the calling thread with
// OpenMP inside; `prepare` asks the kernel's pure workspace query.
#pragma once

#include <memory>

#include "runtime/backend/backend.h"

namespace ucudnn::cpu {

// Which call a CPU backend's `prepare` gives an op that has a prepared one (CpuKernel::prepare: oneDNN's
// Conv and Gemm primitives). kPlain always gives the plain call of CpuKernel::run: what the importer's constant
// folding evaluates with (Note [folding through the backend], onnx_import/constant_folding.cc).
enum class CpuCalls { kPrepared, kPlain };

// A CPU backend whose prepare gives `calls`; kPlain calls also leave the calling thread's OpenMP thread count
// as it is (no use_session_threads).
std::unique_ptr<runtime::Backend> make_cpu_backend(CpuCalls calls = CpuCalls::kPrepared);

// What the CPU backend can do (Note [backend capabilities]), without making one.
const runtime::BackendCapabilities& cpu_capabilities();

// Workspace the CPU kernel of `node` needs for one call with a batch of
// `micro_batch` (input 0's leading dim replaced; 0 = the graph's) and `algorithm`
// (-1 = the kernel's default). What the optimizer plans non-convolution steps with.
size_t cpu_step_workspace(const ir::Graph& graph, const ir::Node& node, int64_t micro_batch, int algorithm);

}  // namespace ucudnn::cpu
