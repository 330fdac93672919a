// Launchers of the backward pools (runtime/cuda/pooling_grad_kernels.cu), the adjoints of
// window_kernels.h's pools over the same PoolGeometry: NCHW for 1 to 3 spatial axes, or with
// channels_last NHWC for 2 ([N, H, W, C] for X, dY and dX alike).
// Gathers rather than scatters: each dX element is the sum of dY over the windows that cover it, in
// ascending window order from 0.0f (runtime/cpu/pooling_grad.cc's order; descending with dilation or
// planes past 2^30 values, see the .cu) — no atomics, deterministic, and every dX element is written.
// MaxPoolGrad: a window's gradient goes to the tap its forward max picks, recomputed from X with
// runtime/cpu/pooling_grad.cc's rule (first maximum in row-major window order; a NaN wins, the last
// one of the window). AveragePoolGrad: dY / divisor to every tap inside the input, the divisor as
// the forward's (taps inside the input, or inside the padded input with include_pad).
// Each only queues work on `stream` and returns the launch error: cudaErrorInvalidValue for a rank
// outside 1..3 or channels_last with a rank other than 2. dX must not overlap dY or X.
#pragma once

#include <cuda_runtime_api.h>

#include "runtime/cuda/window_kernels.h"

namespace ucudnn::cuda {

// dX [N, C, input...] from dY [N, C, output...] and X (like dX); NHWC with channels_last.
cudaError_t launch_max_pool_grad(const float* dy, const float* x, float* dx, const PoolGeometry& geometry,
                                 cudaStream_t stream);

// dX [N, C, input...] from dY [N, C, output...]; NHWC with channels_last.
cudaError_t launch_average_pool_grad(const float* dy, float* dx, const PoolGeometry& geometry, bool include_pad,
                                     cudaStream_t stream);

}  // namespace ucudnn::cuda
