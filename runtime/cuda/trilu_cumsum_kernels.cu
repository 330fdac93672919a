// Trilu's and CumSum's CUDA kernels (contracts: trilu_cumsum_kernels.h).
#include <cstdint>

#include "runtime/core/dtype.h"
#include "runtime/cuda/grid_loop.cuh"
#include "runtime/cuda/trilu_cumsum_kernels.h"
#include "runtime/ops/running_sum.h"

namespace ucudnn::cuda {

namespace {

template <typename T>
__global__ void trilu_kernel(const T* src, T* dst, int64_t n, int64_t rows, int64_t cols, int64_t k, bool upper) {
  UCUDNN_GRID_LOOP(i, n) {
    const int64_t c = i % cols, r = (i / cols) % rows;
    dst[i] = (upper ? c - r >= k : c - r <= k) ? src[i] : T(0);
  }
}

template <typename T>
__global__ void cumsum_kernel(const T* src, T* dst, int64_t outer, int64_t length, int64_t inner, bool exclusive,
                              bool reverse) {
  UCUDNN_GRID_LOOP(line, outer * inner) {
    const int64_t first = line / inner * length * inner + line % inner;
    running_sum(src + first, dst + first, length, inner, exclusive, reverse);
  }
}

template <typename T>
cudaError_t queue_trilu(const void* src, void* dst, int64_t n, int64_t rows, int64_t cols, int64_t k, bool upper,
                        cudaStream_t stream) {
  trilu_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(static_cast<const T*>(src), static_cast<T*>(dst), n, rows,
                                                          cols, k, upper);
  return cudaGetLastError();
}

template <typename T>
cudaError_t queue_cumsum(const void* src, void* dst, int64_t outer, int64_t length, int64_t inner, bool exclusive,
                         bool reverse, cudaStream_t stream) {
  cumsum_kernel<T><<<blocks_for(outer * inner), kThreads, 0, stream>>>(
      static_cast<const T*>(src), static_cast<T*>(dst), outer, length, inner, exclusive, reverse);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_trilu(const void* src, void* dst, size_t element_bytes, int64_t n, int64_t rows, int64_t cols,
                         int64_t k, bool upper, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  switch (element_bytes) {
    case 1: return queue_trilu<uint8_t>(src, dst, n, rows, cols, k, upper, stream);
    case 2: return queue_trilu<uint16_t>(src, dst, n, rows, cols, k, upper, stream);
    case 4: return queue_trilu<uint32_t>(src, dst, n, rows, cols, k, upper, stream);
    case 8: return queue_trilu<uint64_t>(src, dst, n, rows, cols, k, upper, stream);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t launch_cumsum(int dtype, const void* src, void* dst, int64_t outer, int64_t length, int64_t inner,
                          bool exclusive, bool reverse, cudaStream_t stream) {
  if (outer * length * inner == 0) return cudaSuccess;
  switch (static_cast<DType>(dtype)) {
    case DType::kFloat32: return queue_cumsum<float>(src, dst, outer, length, inner, exclusive, reverse, stream);
    case DType::kInt32: return queue_cumsum<int32_t>(src, dst, outer, length, inner, exclusive, reverse, stream);
    case DType::kInt64: return queue_cumsum<int64_t>(src, dst, outer, length, inner, exclusive, reverse, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace ucudnn::cuda
