// The softmax_loss family's own CUDA kernels (contracts: softmax_loss_kernels.h).
// Reductions are per-thread partial sums followed by a warp-shuffle tree in the
// block (block_reduce), in a fixed order. The loss is two launches: one block a
// row writes log_prob, then one block sums q·log_prob over all rows in double
// (no atomics: the same bits every run).
#include <cstdint>

#include "runtime/cuda/grid_loop.cuh"
#include "runtime/cuda/softmax_loss_kernels.h"

namespace ucudnn::cuda {

namespace {

constexpr int kLossThreads = 1024;  // the one block that sums the loss
constexpr int64_t kBlockPerOutput = 128;  // reduced boxes at least this long get a block each

struct Sum {
  template <typename T>
  __device__ T operator()(T a, T b) const { return a + b; }
};
struct Max {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

// Combines every thread's `v` with `op` (whose neutral value is `identity`); every thread
// gets the result. blockDim.x a multiple of 32, at most 1024; `shared` holds 32 values
// and is free again on return.
template <typename T, typename Op>
__device__ T block_reduce(T v, Op op, T identity, T* shared) {
  for (int offset = 16; offset > 0; offset >>= 1) v = op(v, __shfl_down_sync(0xffffffffu, v, offset));
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < warps ? shared[lane] : identity;
    for (int offset = 16; offset > 0; offset >>= 1) v = op(v, __shfl_down_sync(0xffffffffu, v, offset));
    if (lane == 0) shared[0] = v;
  }
  __syncthreads();
  const T result = shared[0];
  __syncthreads();
  return result;
}

struct ReduceBox {
  int rank = 0;
  int64_t count = 1;
  int64_t dims[kMaxDims] = {}, strides[kMaxDims] = {};
};

__device__ __forceinline__ int64_t base_offset(const StridedLayout& layout, int64_t i) {
  int64_t offset = 0;
  for (int d = layout.rank - 1; d >= 0; --d) {
    offset += (i % layout.dims[d]) * layout.strides[0][d];
    i /= layout.dims[d];
  }
  return offset;
}

__device__ __forceinline__ int64_t box_offset(const ReduceBox& box, int64_t k) {
  int64_t offset = 0;
  for (int d = box.rank - 1; d >= 0; --d) {
    offset += (k % box.dims[d]) * box.strides[d];
    k /= box.dims[d];
  }
  return offset;
}

// One thread an output (short boxes).
__global__ void reduce_sum_thread_kernel(const float* src, float* dst, int64_t n, StridedLayout layout,
                                         ReduceBox box) {
  UCUDNN_GRID_LOOP(i, n) {
    const int64_t base = base_offset(layout, i);
    float sum = 0.0f;
    for (int64_t k = 0; k < box.count; ++k) sum += src[base + box_offset(box, k)];
    dst[i] = sum;
  }
}

// One block an output (long boxes): consecutive threads read consecutive box elements.
__global__ void reduce_sum_block_kernel(const float* src, float* dst, int64_t n, StridedLayout layout,
                                        ReduceBox box) {
  __shared__ float shared[32];
  for (int64_t i = blockIdx.x; i < n; i += gridDim.x) {
    const int64_t base = base_offset(layout, i);
    float sum = 0.0f;
    for (int64_t k = threadIdx.x; k < box.count; k += blockDim.x) sum += src[base + box_offset(box, k)];
    sum = block_reduce(sum, Sum{}, 0.0f, shared);
    if (threadIdx.x == 0) dst[i] = sum;
  }
}

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

cudaError_t launch_reduce_sum(const float* src, float* dst, int64_t n, const StridedLayout& layout,
                              int reduced_rank, const int64_t* reduced_dims, const int64_t* reduced_strides,
                              cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  ReduceBox box;
  box.rank = reduced_rank;
  for (int d = 0; d < reduced_rank; ++d) {
    box.dims[d] = reduced_dims[d];
    box.strides[d] = reduced_strides[d];
    box.count *= reduced_dims[d];
  }
  if (box.count >= kBlockPerOutput)
    reduce_sum_block_kernel<<<row_blocks(n), kThreads, 0, stream>>>(src, dst, n, layout, box);
  else
    reduce_sum_thread_kernel<<<blocks_for(n), kThreads, 0, stream>>>(src, dst, n, layout, box);
  return cudaGetLastError();
}

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
