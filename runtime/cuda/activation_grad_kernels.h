// Launchers of the activation_grad family's CUDA kernels
// (runtime/cuda/activation_grad_kernels.cu), callable from plain C++. The math
// (derivatives, the dropout hash) is runtime/ops/activation_grad.h's, shared
// with the CPU kernels. Every launcher only queues work on `stream` and returns
// the launch error (cudaSuccess when queued); grid-stride loops, int64 indices.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "runtime/cuda/kernels.h"
#include "runtime/ops/activation_grad.h"

namespace ucudnn::cuda {

// dx[i] = dy[i] · activation'(x[i]). `low`, `high`: Clip's bounds, read on the device (nullptr: none).
cudaError_t launch_activation_grad(ActivationKind kind, const float* dy, const float* x, float* dx, int64_t n,
                                   float alpha, float beta, const float* low, const float* high, cudaStream_t stream);

// PReluGrad over n elements of X: dx = x > 0 ? dy : slope · dy, and dslope (slope_n elements,
// zeroed here first, then summed with atomics) = Σ (x > 0 ? 0 : x · dy) over the elements each
// slope element serves. `layout`: X's dims, strides[0] the slope's strides (0 where broadcast).
cudaError_t launch_prelu_grad(const float* dy, const float* x, const float* slope, float* dx, float* dslope,
                              int64_t n, int64_t slope_n, const StridedLayout& layout, cudaStream_t stream);

// DropoutTrain: mask[i] = dropout_mask(*seed, i, ratio, scale), y[i] = x[i] · mask[i]; the seed is
// read on the device.
cudaError_t launch_dropout_train(const float* x, const int64_t* seed, float* y, float* mask, int64_t n, float ratio,
                                 float scale, cudaStream_t stream);

}  // namespace ucudnn::cuda
