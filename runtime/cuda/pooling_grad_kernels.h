// Launchers of the backward pools (runtime/cuda/pooling_grad_kernels.cu), the adjoints of
// window_kernels.h's pools over the same PoolGeometry: NCHW, or NHWC for 2-D pools (channels_last:
// dX, X [N, H, W, C], dY [N, OH, OW, C]).
// Gathers rather than scatters: one thread a dX element sums dY over the windows that cover it, in
// a fixed order — no atomics, deterministic, and every dX element is written (no zeroing needed).
// MaxPoolGrad: a window's gradient goes to the tap its forward max picks, recomputed from X with
// runtime/cpu/pooling_grad.cc's rule (first maximum in row-major window order; a NaN wins, the last
// one of the window). AveragePoolGrad: dY / divisor to every tap inside the input, the divisor as
// the forward's (taps inside the input, or inside the padded input with include_pad).
// Each only queues work on `stream` and returns the launch error.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "runtime/cuda/window_kernels.h"

namespace ucudnn::cuda {

// dX [N, C, input...] from dY [N, C, output...] and X (like dX); channels-last as above. With a
// workspace of max_pool_choice_bytes() (when that is not 0), each window's max is found once (Note [max
// pool choices], pooling_grad_kernels.cu); without, the gather recomputes it per element.
cudaError_t launch_max_pool_grad(const float* dy, const float* x, float* dx, const PoolGeometry& geometry,
                                 void* workspace, cudaStream_t stream);
// One byte a dY element: the workspace of the one-pass form; 0 where it does not apply (dilation, or a
// window of 255 taps or more).
size_t max_pool_choice_bytes(const PoolGeometry& geometry);

// dX [N, C, input...] from dY [N, C, output...]; channels-last as above.
cudaError_t launch_average_pool_grad(const float* dy, float* dx, const PoolGeometry& geometry, bool include_pad,
                                     cudaStream_t stream);

}  // namespace ucudnn::cuda
