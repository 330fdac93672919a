// The comparisons', logical ops' and Where's CUDA kernels (contracts: logic_kernels.h): one thread an
// output element, each operand's element found through its broadcast strides.
#include <cstdint>

#include "runtime/core/dtype.h"
#include "runtime/cuda/grid_loop.cuh"
#include "runtime/cuda/logic_kernels.h"

namespace ucudnn::cuda {

namespace {

__device__ __forceinline__ void offsets(const Broadcast3& layout, int64_t i, int operands, int64_t* offset) {
  for (int k = 0; k < operands; ++k) offset[k] = 0;
  for (int d = layout.rank - 1; d >= 0; --d) {
    const int64_t index = i % layout.dims[d];
    i /= layout.dims[d];
    for (int k = 0; k < operands; ++k) offset[k] += index * layout.strides[k][d];
  }
}

template <typename T>
__global__ void compare_kernel(CompareOp op, const T* a, const T* b, bool* dst, int64_t n, Broadcast3 layout) {
  UCUDNN_GRID_LOOP(i, n) {
    int64_t offset[2];
    offsets(layout, i, 2, offset);
    const T x = a[offset[0]], y = b[offset[1]];
    bool r = false;
    switch (op) {
      case CompareOp::kEqual: r = x == y; break;
      case CompareOp::kLess: r = x < y; break;
      case CompareOp::kGreater: r = x > y; break;
      case CompareOp::kLessOrEqual: r = x <= y; break;
      case CompareOp::kGreaterOrEqual: r = x >= y; break;
      case CompareOp::kAnd: r = x && y; break;
      case CompareOp::kOr: r = x || y; break;
      case CompareOp::kXor: r = static_cast<bool>(x) != static_cast<bool>(y); break;
    }
    dst[i] = r;
  }
}

__global__ void not_kernel(const bool* src, bool* dst, int64_t n) {
  UCUDNN_GRID_LOOP(i, n) dst[i] = !src[i];
}

__global__ void is_nan_kernel(const float* src, bool* dst, int64_t n) {
  UCUDNN_GRID_LOOP(i, n) dst[i] = isnan(src[i]);
}

__global__ void is_inf_kernel(const float* src, bool* dst, int64_t n, bool negative, bool positive) {
  UCUDNN_GRID_LOOP(i, n) dst[i] = isinf(src[i]) && (src[i] > 0.0f ? positive : negative);
}

template <typename E>
__global__ void where_kernel(const bool* cond, const E* x, const E* y, E* dst, int64_t n, Broadcast3 layout) {
  UCUDNN_GRID_LOOP(i, n) {
    int64_t offset[3];
    offsets(layout, i, 3, offset);
    dst[i] = cond[offset[0]] ? x[offset[1]] : y[offset[2]];
  }
}

template <typename T>
cudaError_t queue_compare(CompareOp op, const void* a, const void* b, bool* dst, int64_t n, const Broadcast3& layout,
                          cudaStream_t stream) {
  compare_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(op, static_cast<const T*>(a), static_cast<const T*>(b),
                                                            dst, n, layout);
  return cudaGetLastError();
}

template <typename E>
cudaError_t queue_where(const bool* cond, const void* x, const void* y, void* dst, int64_t n, const Broadcast3& layout,
                        cudaStream_t stream) {
  where_kernel<E><<<blocks_for(n), kThreads, 0, stream>>>(cond, static_cast<const E*>(x), static_cast<const E*>(y),
                                                          static_cast<E*>(dst), n, layout);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_compare(CompareOp op, int dtype, const void* a, const void* b, bool* dst, int64_t n,
                           const Broadcast3& layout, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  switch (static_cast<DType>(dtype)) {
    case DType::kFloat32: return queue_compare<float>(op, a, b, dst, n, layout, stream);
    case DType::kInt32: return queue_compare<int32_t>(op, a, b, dst, n, layout, stream);
    case DType::kInt64: return queue_compare<int64_t>(op, a, b, dst, n, layout, stream);
    case DType::kBool: return queue_compare<bool>(op, a, b, dst, n, layout, stream);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t launch_is_nan(const float* src, bool* dst, int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  is_nan_kernel<<<blocks_for(n), kThreads, 0, stream>>>(src, dst, n);
  return cudaGetLastError();
}

cudaError_t launch_is_inf(const float* src, bool* dst, int64_t n, bool negative, bool positive, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  is_inf_kernel<<<blocks_for(n), kThreads, 0, stream>>>(src, dst, n, negative, positive);
  return cudaGetLastError();
}

cudaError_t launch_not(const bool* src, bool* dst, int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  not_kernel<<<blocks_for(n), kThreads, 0, stream>>>(src, dst, n);
  return cudaGetLastError();
}

cudaError_t launch_where(const bool* cond, const void* x, const void* y, void* dst, size_t element_bytes, int64_t n,
                         const Broadcast3& layout, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  switch (element_bytes) {
    case 1: return queue_where<uint8_t>(cond, x, y, dst, n, layout, stream);
    case 2: return queue_where<uint16_t>(cond, x, y, dst, n, layout, stream);
    case 4: return queue_where<uint32_t>(cond, x, y, dst, n, layout, stream);
    case 8: return queue_where<uint64_t>(cond, x, y, dst, n, layout, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace ucudnn::cuda
