// Launchers of the Reduce* family's and ArgMax/ArgMin's CUDA kernels (runtime/cuda/reduce_kernels.cu).
// Same contracts as kernels.h: each only queues work on `stream` and returns the launch error; int64 index
// arithmetic. Sums run in a fixed order (per-thread partial sums, then a tree in the block), so results
// repeat bit for bit from run to run.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "runtime/cuda/kernels.h"
#include "runtime/ops/reduce_kind.h"

namespace ucudnn::cuda {

// Output element i (layout.dims = the input dims with reduced ones set to 1, strides[0] = input strides)
// is the `kind` reduction (runtime/ops/reduce_kind.h) of the box spanned by `reduced_dims` /
// `reduced_strides` (count `reduced_rank`) from its base. Long boxes get a block each.
cudaError_t launch_reduce(ReduceKind kind, const float* src, float* dst, int64_t n, const StridedLayout& layout,
                          int reduced_rank, const int64_t* reduced_dims, const int64_t* reduced_strides,
                          cudaStream_t stream);

// ArgMax (max) or ArgMin: src viewed as [outer, count, inner], count >= 1; dst[o · inner + j] is the index
// along the middle dim of the first extreme of line (o, j), the last with `last`; a NaN is the extreme.
cudaError_t launch_arg_extreme(const float* src, int64_t* dst, int64_t outer, int64_t count, int64_t inner, bool max,
                               bool last, cudaStream_t stream);

}  // namespace ucudnn::cuda
