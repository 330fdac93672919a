// The CUDA backend (runtime/backend/backend.h) over the CUDA kernel table
// (cuda_kernel.h): one GPU, cudaMalloc'd buffers, copies queued on stream 0,
// CUDA events. Stream 0 is the main context's; `use_streams(2)` makes a second
// context (its own stream, cuDNN and cuBLAS handles) for side-stream steps
// (Note [side stream], runtime/plan/side_stream.h). Kernels are prepared
// on the main context (descriptors, algorithm, workspace size: no device
// allocation) and run on the context of the stream they are given. Runs can
// be captured into CUDA graphs and replayed (Note [capture on the CUDA backend]).
#pragma once

#include <memory>
#include <string>

#include "runtime/backend/backend.h"
#include "runtime/cuda/cuda_context.h"

namespace ucudnn::cuda {

// The backend for GPU `device` with `math` (TF32 allowed or strict FP32) for every kernel.
Expected<std::unique_ptr<runtime::Backend>> make_cuda_backend(int device = 0, MathMode math = MathMode::kTf32);

// What the CUDA backend can do (Note [backend capabilities]), without a GPU.
const runtime::BackendCapabilities& cuda_capabilities();

// The GPU's name as plans and benchmark keys record it ("NVIDIA H200"); "unknown GPU" when unreadable.
std::string gpu_name(int device);

}  // namespace ucudnn::cuda
