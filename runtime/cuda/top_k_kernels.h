// Launcher of TopK's CUDA kernel (runtime/cuda/top_k_kernels.cu; the op: runtime/ops/top_k.h). Same
// contracts as kernels.h: it only queues work on `stream` and returns the launch error.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace ucudnn::cuda {

// The k best of each line of src seen as [outer, length, inner] along the middle dim, into values and
// (unless nullptr) int64 indices of [outer, k, inner]: one thread per line, k passes over it, each taking
// the best element after the one taken before (equal values in index order). `dtype`: a ucudnn::DType as
// an int, float32, int32 or int64; cudaErrorInvalidValue for another.
cudaError_t launch_top_k(int dtype, const void* src, void* values, int64_t* indices, int64_t outer, int64_t length,
                         int64_t inner, int64_t k, bool largest, cudaStream_t stream);

}  // namespace ucudnn::cuda
