// Launcher of GridSample's CUDA kernel (runtime/cuda/grid_sample_kernels.cu): NCHW, one thread an output
// element, sampled by grid_sample_math.h as on the CPU. Only queues work on `stream` and returns the launch
// error.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "runtime/ops/grid_sample_math.h"

namespace ucudnn::cuda {

// Y [n, c, out_h, out_w] from X [n, c, in_h, in_w] at grid [n, out_h, out_w, 2].
cudaError_t launch_grid_sample(const float* x, const float* grid, float* y, int64_t n, int64_t c,
                               const GridSampleParams& params, cudaStream_t stream);

}  // namespace ucudnn::cuda
