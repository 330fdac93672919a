// The softmax_loss family's own CUDA kernels (contracts: softmax_loss_kernels.h).
// Sums are per-thread partial sums followed by a warp-shuffle tree in the
// block (block_reduce.cuh), in a fixed order. The loss is two launches: one block a
// row writes log_prob, then one block sums q·log_prob over all rows in double
// (no atomics: the same bits every run).
#include <cstdint>

#include "runtime/cuda/block_reduce.cuh"
#include "runtime/cuda/grid_loop.cuh"
#include "runtime/cuda/softmax_loss_kernels.h"

namespace ucudnn::cuda {

namespace {

constexpr int kLossThreads = 1024;  // the one block that sums the loss

__global__ void log_softmax_rows_kernel(const float* scores, float* log_prob, int64_t rows, int64_t classes) {
  __shared__ float shared[32];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* x = scores + r * classes;
    float* lp = log_prob + r * classes;
    float max = -INFINITY;
    for (int64_t c = threadIdx.x; c < classes; c += blockDim.x) max = fmaxf(max, x[c]);
    max = block_reduce(max, Max{}, -INFINITY, shared);
    float sum = 0.0f;
    for (int64_t c = threadIdx.x; c < classes; c += blockDim.x) sum += expf(x[c] - max);
    const float log_sum = logf(block_reduce(sum, Sum{}, 0.0f, shared));
    for (int64_t c = threadIdx.x; c < classes; c += blockDim.x) lp[c] = x[c] - max - log_sum;
  }
}

__device__ __forceinline__ float target(int64_t c, int64_t label, float smoothing, float uniform) {
  return (c == label ? 1.0f - smoothing : 0.0f) + uniform;
}

// One block: *loss = −(1/rows) Σ q·log_prob, summed in double.
__global__ void loss_total_kernel(const float* log_prob, const int64_t* labels, float* loss, int64_t rows,
                                  int64_t classes, float smoothing) {
  __shared__ double shared[32];
  const float uniform = smoothing / static_cast<float>(classes);
  double sum = 0.0;
  const int64_t n = rows * classes;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    const int64_t r = i / classes;
    const float q = target(i - r * classes, labels[r], smoothing, uniform);
    if (q != 0.0f) sum += static_cast<double>(q) * log_prob[i];
  }
  sum = block_reduce(sum, Sum{}, 0.0, shared);
  if (threadIdx.x == 0) *loss = rows == 0 ? 0.0f : static_cast<float>(-sum / static_cast<double>(rows));
}

__global__ void loss_grad_kernel(const float* d_loss, const float* log_prob, const int64_t* labels, float* d_scores,
                                 int64_t rows, int64_t classes, float smoothing) {
  const float scale = *d_loss / static_cast<float>(rows);
  const float uniform = smoothing / static_cast<float>(classes);
  UCUDNN_GRID_LOOP(i, rows * classes) {
    const int64_t r = i / classes;
    d_scores[i] = scale * (expf(log_prob[i]) - target(i - r * classes, labels[r], smoothing, uniform));
  }
}

unsigned row_blocks(int64_t rows) { return static_cast<unsigned>(rows < (int64_t{1} << 20) ? rows : int64_t{1} << 20); }

}  // namespace

cudaError_t launch_softmax_cross_entropy(const float* scores, const int64_t* labels, float* loss, float* log_prob,
                                         int64_t rows, int64_t classes, float smoothing, cudaStream_t stream) {
  if (rows > 0) {
    log_softmax_rows_kernel<<<row_blocks(rows), kThreads, 0, stream>>>(scores, log_prob, rows, classes);
    const cudaError_t error = cudaGetLastError();
    if (error != cudaSuccess) return error;
  }
  loss_total_kernel<<<1, kLossThreads, 0, stream>>>(log_prob, labels, loss, rows, classes, smoothing);
  return cudaGetLastError();
}

cudaError_t launch_softmax_cross_entropy_grad(const float* d_loss, const float* log_prob, const int64_t* labels,
                                              float* d_scores, int64_t rows, int64_t classes, float smoothing,
                                              cudaStream_t stream) {
  const int64_t n = rows * classes;
  if (n == 0) return cudaSuccess;
  loss_grad_kernel<<<blocks_for(n), kThreads, 0, stream>>>(d_loss, log_prob, labels, d_scores, rows, classes,
                                                           smoothing);
  return cudaGetLastError();
}

}  // namespace ucudnn::cuda
