// Launcher of Resize's CUDA kernel (runtime/cuda/resize_kernels.cu): NCHW, one thread an output
// element, its source elements picked by resize_coordinates.h as on the CPU. Only queues work on
// `stream` and returns the launch error.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "runtime/ops/resize_coordinates.h"

namespace ucudnn::cuda {

// Y [planes, h.out, w.out] from X [planes, h.in, w.in].
cudaError_t launch_resize(const float* x, float* y, int64_t planes, const ResizeParams& params, cudaStream_t stream);

}  // namespace ucudnn::cuda
