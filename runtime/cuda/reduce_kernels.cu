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

// Calls f(offset) for box elements begin + threadIdx.x, then every blockDim.x-th up to end, walking
// the box's last dim without divisions: the other dims' offset is recomputed only when a row ends.
template <typename F>
__device__ __forceinline__ void for_each_box_element(const ReduceBox& box, int64_t begin, int64_t end, F f) {
  const int r = box.rank - 1;
  const int64_t inner = box.dims[r], inner_stride = box.strides[r];
  const int64_t step_rows = blockDim.x / inner, step_columns = blockDim.x % inner;
  int64_t k = begin + threadIdx.x;
  if (k >= end) return;
  int64_t row = k / inner, column = k % inner;
  ReduceBox outer = box;
  outer.rank = r;
  int64_t row_offset = box_offset(outer, row);
  for (; k < end; k += blockDim.x) {
    f(row_offset + column * inner_stride);
    column += step_columns;
    const int64_t next_row = row + step_rows + (column >= inner ? 1 : 0);
    if (column >= inner) column -= inner;
    if (next_row != row) {
      row = next_row;
      row_offset = r == 1 ? row * box.strides[0] : box_offset(outer, row);
    }
  }
}

// A block an output's part (long boxes): consecutive threads read consecutive box elements of part
// blockIdx.y of `parts`. One part writes the output; several write their sums to partial[i][part]
// (only kinds whose contributions add are split: reduce_parts).
__global__ void reduce_block_kernel(ReduceKind kind, const float* src, float* dst, int64_t n, StridedLayout layout,
                                    ReduceBox box, int64_t parts, double* partial) {
  __shared__ float shared[32];
  const Extreme pick{kind != ReduceKind::kMin};
  const float no_extreme = pick.max ? -INFINITY : INFINITY;
  const int64_t chunk = (box.count + parts - 1) / parts, begin = blockIdx.y * chunk;
  const int64_t end = begin + chunk < box.count ? begin + chunk : box.count;
  for (int64_t i = blockIdx.x; i < n; i += gridDim.x) {
    const float* base = src + base_offset(layout, i);
    float extreme = no_extreme;
    if (uses_extreme(kind)) {
      for_each_box_element(box, begin, end, [&](int64_t at) { extreme = pick(extreme, base[at]); });
      extreme = block_reduce(extreme, pick, no_extreme, shared);
    }
    float acc = kind == ReduceKind::kProd ? 1.0f : 0.0f;
    if (uses_sum(kind, extreme)) {
      for_each_box_element(box, begin, end, [&](int64_t at) {
        const float x = base[at];
        acc = kind == ReduceKind::kProd ? acc * x : acc + contribution(kind, x, extreme);
      });
      acc = kind == ReduceKind::kProd ? block_reduce(acc, Product{}, 1.0f, shared)
                                      : block_reduce(acc, Sum{}, 0.0f, shared);
    }
    if (threadIdx.x != 0) continue;
    if (parts == 1) dst[i] = finish_reduction(kind, acc, box.count, extreme);
    else partial[i * parts + blockIdx.y] = acc;
  }
}

// Output i from its parts' sums, added in order (deterministic).
__global__ void finish_parts_kernel(ReduceKind kind, float* dst, int64_t n, int64_t count, int64_t parts,
                                    const double* partial) {
  UCUDNN_GRID_LOOP(i, n) {
    double acc = 0.0;
    for (int64_t p = 0; p < parts; ++p) acc += partial[i * parts + p];
    dst[i] = finish_reduction(kind, acc, count, 0.0f);
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

int64_t reduce_parts(ReduceKind kind, int64_t outputs, int64_t count) {
  const bool adds = kind == ReduceKind::kSum || kind == ReduceKind::kMean || kind == ReduceKind::kL1 ||
                    kind == ReduceKind::kL2 || kind == ReduceKind::kSumSquare || kind == ReduceKind::kLogSum;
  if (!adds || count < kBlockPerOutput || outputs <= 0 || outputs >= kReduceSplitBlocks) return 1;
  // About kReduceSplitBlocks blocks in all (a few waves on any GPU), a part no smaller than 16 values a thread.
  const int64_t per_part = int64_t{16} * kThreads, wanted = (count + per_part - 1) / per_part;
  const int64_t cap = kReduceSplitBlocks / outputs;
  return wanted < 1 ? 1 : (wanted < cap ? wanted : cap);
}

size_t reduce_workspace_bytes(ReduceKind kind, int64_t outputs, int64_t count) {
  const int64_t parts = reduce_parts(kind, outputs, count);
  return parts > 1 ? static_cast<size_t>(outputs * parts) * sizeof(double) : 0;
}

cudaError_t launch_reduce(ReduceKind kind, const float* src, float* dst, int64_t n, const StridedLayout& layout,
                          int reduced_rank, const int64_t* reduced_dims, const int64_t* reduced_strides,
                          void* workspace, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  ReduceBox box;
  box.rank = reduced_rank;
  for (int d = 0; d < reduced_rank; ++d) {
    box.dims[d] = reduced_dims[d];
    box.strides[d] = reduced_strides[d];
    box.count *= reduced_dims[d];
  }
  const int64_t parts = reduce_parts(kind, n, box.count);
  if (parts > 1) {
    if (workspace == nullptr) return cudaErrorInvalidValue;
    double* partial = static_cast<double*>(workspace);
    reduce_block_kernel<<<dim3(static_cast<unsigned>(n), static_cast<unsigned>(parts)), kThreads, 0, stream>>>(
        kind, src, dst, n, layout, box, parts, partial);
    finish_parts_kernel<<<blocks_for(n), kThreads, 0, stream>>>(kind, dst, n, box.count, parts, partial);
  } else if (box.count >= kBlockPerOutput)
    reduce_block_kernel<<<row_blocks(n), kThreads, 0, stream>>>(kind, src, dst, n, layout, box, 1, nullptr);
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
