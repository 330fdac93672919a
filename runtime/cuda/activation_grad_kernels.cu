// The activation_grad family's CUDA kernels (see activation_grad_kernels.h):
// elementwise grid-stride loops, 256 threads a block. PReluGrad sums dSlope per
// block in shared memory when the slope is small (a per-channel slope: a few
// hundred floats), then adds each block's sums to the output with one atomic
// per slope element; a large slope adds straight to the output.
#include "runtime/cuda/activation_grad_kernels.h"

#include <algorithm>

#include "runtime/cuda/grid_loop.cuh"

namespace ucudnn::cuda {

namespace {

// Slopes up to this many elements are summed in shared memory (16 KiB a block).
constexpr int64_t kSharedSlopeElements = 4096;
// Blocks of the PReluGrad kernel at most: each flushes its sums once, so fewer blocks, fewer atomics.
constexpr int64_t kPreluGradMaxBlocks = 1024;

// Element offset of X's element i in the slope (strides[0] of `layout`).
__device__ __forceinline__ int64_t slope_offset(const StridedLayout& layout, int64_t i) {
  int64_t offset = 0;
  for (int d = layout.rank - 1; d >= 0; --d) {
    const int64_t dim = layout.dims[d];
    offset += (i % dim) * layout.strides[0][d];
    i /= dim;
  }
  return offset;
}

template <ActivationKind Kind>
__global__ void activation_grad_kernel(const float* dy, const float* x, float* dx, int64_t n, float alpha,
                                       float beta, const float* low, const float* high) {
  const float lo = low != nullptr ? *low : -INFINITY, hi = high != nullptr ? *high : INFINITY;
  UCUDNN_GRID_LOOP(i, n) dx[i] = dy[i] * activation_derivative(Kind, x[i], alpha, beta, lo, hi);
}

// `shared_sums`: uniform over the grid (every thread takes the same branches around __syncthreads).
__global__ void prelu_grad_kernel(const float* dy, const float* x, const float* slope, float* dx, float* dslope,
                                  int64_t n, int64_t slope_n, StridedLayout layout, bool shared_sums) {
  extern __shared__ float block_sums[];
  if (shared_sums) {
    for (int64_t j = threadIdx.x; j < slope_n; j += blockDim.x) block_sums[j] = 0.0f;
    __syncthreads();
  }
  UCUDNN_GRID_LOOP(i, n) {
    const int64_t j = slope_offset(layout, i);
    const float v = x[i], g = dy[i];
    dx[i] = v > 0.0f ? g : slope[j] * g;
    if (v <= 0.0f) atomicAdd(shared_sums ? &block_sums[j] : &dslope[j], v * g);
  }
  if (shared_sums) {
    __syncthreads();
    for (int64_t j = threadIdx.x; j < slope_n; j += blockDim.x)
      if (block_sums[j] != 0.0f) atomicAdd(&dslope[j], block_sums[j]);
  }
}

__global__ void dropout_train_kernel(const float* x, const int64_t* seed, float* y, float* mask, int64_t n,
                                     float ratio, float scale) {
  const int64_t s = *seed;
  UCUDNN_GRID_LOOP(i, n) {
    const float m = dropout_mask(s, i, ratio, scale);
    mask[i] = m;
    y[i] = x[i] * m;
  }
}

}  // namespace

cudaError_t launch_activation_grad(ActivationKind kind, const float* dy, const float* x, float* dx, int64_t n,
                                   float alpha, float beta, const float* low, const float* high, cudaStream_t stream) {
  const unsigned blocks = blocks_for(n);
  switch (kind) {
#define UCUDNN_ACTIVATION_GRAD_CASE(name)                                                                      \
  case ActivationKind::name:                                                                                  \
    activation_grad_kernel<ActivationKind::name><<<blocks, kThreads, 0, stream>>>(dy, x, dx, n, alpha, beta, \
                                                                                  low, high);                 \
    break;
    UCUDNN_ACTIVATION_GRAD_CASE(kRelu)
    UCUDNN_ACTIVATION_GRAD_CASE(kLeakyRelu)
    UCUDNN_ACTIVATION_GRAD_CASE(kSigmoid)
    UCUDNN_ACTIVATION_GRAD_CASE(kTanh)
    UCUDNN_ACTIVATION_GRAD_CASE(kHardSigmoid)
    UCUDNN_ACTIVATION_GRAD_CASE(kHardSwish)
    UCUDNN_ACTIVATION_GRAD_CASE(kClip)
    UCUDNN_ACTIVATION_GRAD_CASE(kElu)
#undef UCUDNN_ACTIVATION_GRAD_CASE
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t launch_prelu_grad(const float* dy, const float* x, const float* slope, float* dx, float* dslope,
                              int64_t n, int64_t slope_n, const StridedLayout& layout, cudaStream_t stream) {
  cudaError_t error = cudaMemsetAsync(dslope, 0, static_cast<size_t>(slope_n) * sizeof(float), stream);
  if (error != cudaSuccess || n == 0) return error;
  const bool shared_sums = slope_n <= kSharedSlopeElements;
  const size_t shared_bytes = shared_sums ? static_cast<size_t>(slope_n) * sizeof(float) : 0;
  const unsigned blocks = static_cast<unsigned>(std::min<int64_t>(blocks_for(n), kPreluGradMaxBlocks));
  prelu_grad_kernel<<<blocks, kThreads, shared_bytes, stream>>>(dy, x, slope, dx, dslope, n, slope_n, layout,
                                                                shared_sums);
  return cudaGetLastError();
}

cudaError_t launch_dropout_train(const float* x, const int64_t* seed, float* y, float* mask, int64_t n, float ratio,
                                 float scale, cudaStream_t stream) {
  dropout_train_kernel<<<blocks_for(n), kThreads, 0, stream>>>(x, seed, y, mask, n, ratio, scale);
  return cudaGetLastError();
}

}  // namespace ucudnn::cuda
