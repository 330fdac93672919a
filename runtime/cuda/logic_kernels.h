// Launchers of the comparisons', logical ops' and Where's CUDA kernels (runtime/cuda/logic_kernels.cu).
// Same contracts as kernels.h: each only queues work on `stream` and returns the launch error; int64 index
// arithmetic; bool elements are one byte, 0 or 1.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "runtime/cuda/kernels.h"

namespace ucudnn::cuda {

// Output dims plus, per operand (condition, X, Y for Where; A, B for the others), the element stride of
// each output dim (0 where the operand is broadcast).
struct Broadcast3 {
  int rank = 0;
  int64_t dims[kMaxDims] = {};
  int64_t strides[3][kMaxDims] = {};
};

enum class CompareOp { kEqual, kLess, kGreater, kLessOrEqual, kGreaterOrEqual, kAnd, kOr, kXor };

// dst[i] = a[...] op b[...] as bool; `dtype` (a ucudnn::DType as an int) is the operands': float32, int32,
// int64 or bool (bool for kEqual and the logical ops). cudaErrorInvalidValue for another dtype.
cudaError_t launch_compare(CompareOp op, int dtype, const void* a, const void* b, bool* dst, int64_t n,
                           const Broadcast3& layout, cudaStream_t stream);

// dst[i] = !src[i].
cudaError_t launch_not(const bool* src, bool* dst, int64_t n, cudaStream_t stream);

// dst[i] = isnan(src[i]).
cudaError_t launch_is_nan(const float* src, bool* dst, int64_t n, cudaStream_t stream);
// dst[i] = src[i] is -inf (counted when `negative`) or +inf (when `positive`).
cudaError_t launch_is_inf(const float* src, bool* dst, int64_t n, bool negative, bool positive, cudaStream_t stream);

// dst[i] = cond[...] ? x[...] : y[...] for elements of `element_bytes` (1, 2, 4 or 8).
cudaError_t launch_where(const bool* cond, const void* x, const void* y, void* dst, size_t element_bytes, int64_t n,
                         const Broadcast3& layout, cudaStream_t stream);

}  // namespace ucudnn::cuda
