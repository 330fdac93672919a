// Launchers of Trilu's and CumSum's CUDA kernels (runtime/cuda/trilu_cumsum_kernels.cu; the ops:
// runtime/ops/trilu_cumsum.h). Same contracts as kernels.h: each only queues work on `stream` and returns
// the launch error.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace ucudnn::cuda {

// dst = src with the elements off the kept triangle of each [rows, cols] matrix zeroed; elements of
// `element_bytes` (1, 2, 4 or 8).
cudaError_t launch_trilu(const void* src, void* dst, size_t element_bytes, int64_t n, int64_t rows, int64_t cols,
                         int64_t k, bool upper, cudaStream_t stream);

// Running sums of src seen as [outer, length, inner] along the middle dim: one thread per (outer, inner)
// line. `dtype`: a ucudnn::DType as an int, float32, int32 or int64 (integers wrap); cudaErrorInvalidValue
// for another.
cudaError_t launch_cumsum(int dtype, const void* src, void* dst, int64_t outer, int64_t length, int64_t inner,
                          bool exclusive, bool reverse, cudaStream_t stream);

}  // namespace ucudnn::cuda
