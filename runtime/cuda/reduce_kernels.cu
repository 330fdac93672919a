// The Reduce* family's and ArgMax/ArgMin's CUDA kernels (contracts: reduce_kernels.h). A reduction is at
// most two sweeps over its box: the extreme (ReduceMax, ReduceMin, and ReduceLogSumExp's shift), then the
// sum or product of the contributions (runtime/ops/reduce_kind.h), finished by finish_reduction.
#include <cstdint>

#include "runtime/cuda/block_reduce.cuh"
#include "runtime/cuda/grid_loop.cuh"
#include "runtime/cuda/reduce_kernels.h"

namespace ucudnn::cuda {

namespace {

constexpr int64_t kBlockPerOutput = 128;  // reduced boxes at least this long get a block each

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

// The larger (smaller for a min) of two values; a NaN wins, as in NumPy.
struct Extreme {
  bool max;
  __device__ float operator()(float a, float b) const { return (max ? b > a : b < a) || b != b ? b : a; }
};
struct Product {
  __device__ float operator()(float a, float b) const { return a * b; }
};

__device__ __forceinline__ bool uses_extreme(ReduceKind kind) {
  return kind == ReduceKind::kMax || kind == ReduceKind::kMin || kind == ReduceKind::kLogSumExp;
}
// Whether the second sweep runs: not for max and min, nor for a LogSumExp whose max is not finite.
__device__ __forceinline__ bool uses_sum(ReduceKind kind, float extreme) {
  if (kind == ReduceKind::kMax || kind == ReduceKind::kMin) return false;
  return kind != ReduceKind::kLogSumExp || (extreme == extreme && extreme != INFINITY && extreme != -INFINITY);
}
__device__ __forceinline__ float contribution(ReduceKind kind, float x, float extreme) {
  switch (kind) {
    case ReduceKind::kL1: return fabsf(x);
    case ReduceKind::kL2:
    case ReduceKind::kSumSquare: return x * x;
    case ReduceKind::kLogSumExp: return expf(x - extreme);
    default: return x;
  }
}

// One thread an output (short boxes).
__global__ void reduce_thread_kernel(ReduceKind kind, const float* src, float* dst, int64_t n, StridedLayout layout,
                                     ReduceBox box) {
  const Extreme pick{kind != ReduceKind::kMin};
  UCUDNN_GRID_LOOP(i, n) {
    const int64_t base = base_offset(layout, i);
    float extreme = pick.max ? -INFINITY : INFINITY;
    if (uses_extreme(kind))
      for (int64_t k = 0; k < box.count; ++k) extreme = pick(extreme, src[base + box_offset(box, k)]);
    float acc = kind == ReduceKind::kProd ? 1.0f : 0.0f;
    if (uses_sum(kind, extreme))
      for (int64_t k = 0; k < box.count; ++k) {
        const float x = src[base + box_offset(box, k)];
        acc = kind == ReduceKind::kProd ? acc * x : acc + contribution(kind, x, extreme);
      }
    dst[i] = finish_reduction(kind, acc, box.count, extreme);
  }
}

// One block an output (long boxes): consecutive threads read consecutive box elements.
__global__ void reduce_block_kernel(ReduceKind kind, const float* src, float* dst, int64_t n, StridedLayout layout,
                                    ReduceBox box) {
  __shared__ float shared[32];
  const Extreme pick{kind != ReduceKind::kMin};
  const float no_extreme = pick.max ? -INFINITY : INFINITY;
  for (int64_t i = blockIdx.x; i < n; i += gridDim.x) {
    const int64_t base = base_offset(layout, i);
    float extreme = no_extreme;
    if (uses_extreme(kind)) {
      for (int64_t k = threadIdx.x; k < box.count; k += blockDim.x)
        extreme = pick(extreme, src[base + box_offset(box, k)]);
      extreme = block_reduce(extreme, pick, no_extreme, shared);
    }
    float acc = kind == ReduceKind::kProd ? 1.0f : 0.0f;
    if (uses_sum(kind, extreme)) {
      for (int64_t k = threadIdx.x; k < box.count; k += blockDim.x) {
        const float x = src[base + box_offset(box, k)];
        acc = kind == ReduceKind::kProd ? acc * x : acc + contribution(kind, x, extreme);
      }
      acc = kind == ReduceKind::kProd ? block_reduce(acc, Product{}, 1.0f, shared)
                                      : block_reduce(acc, Sum{}, 0.0f, shared);
    }
    if (threadIdx.x == 0) dst[i] = finish_reduction(kind, acc, box.count, extreme);
  }
}

__global__ void arg_extreme_kernel(const float* src, int64_t* dst, int64_t lines, int64_t count, int64_t inner,
                                   bool max, bool last) {
  UCUDNN_GRID_LOOP(line, lines) {
    const float* x = src + (line / inner) * count * inner + line % inner;
    int64_t best = 0;
    float b = x[0];
    for (int64_t i = 1; i < count && b == b; ++i) {
      const float v = x[i * inner];
      if (v != v || (max ? v > b : v < b) || (last && v == b)) {
        best = i;
        b = v;
      }
    }
    dst[line] = best;
  }
}

unsigned row_blocks(int64_t rows) { return static_cast<unsigned>(rows < (int64_t{1} << 20) ? rows : int64_t{1} << 20); }

}  // namespace

cudaError_t launch_reduce(ReduceKind kind, const float* src, float* dst, int64_t n, const StridedLayout& layout,
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
    reduce_block_kernel<<<row_blocks(n), kThreads, 0, stream>>>(kind, src, dst, n, layout, box);
  else
    reduce_thread_kernel<<<blocks_for(n), kThreads, 0, stream>>>(kind, src, dst, n, layout, box);
  return cudaGetLastError();
}

cudaError_t launch_arg_extreme(const float* src, int64_t* dst, int64_t outer, int64_t count, int64_t inner, bool max,
                               bool last, cudaStream_t stream) {
  const int64_t lines = outer * inner;
  if (lines == 0) return cudaSuccess;
  arg_extreme_kernel<<<blocks_for(lines), kThreads, 0, stream>>>(src, dst, lines, count, inner, max, last);
  return cudaGetLastError();
}

}  // namespace ucudnn::cuda
