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
// `reduced_strides` (count `reduced_rank` >= 1) from its base. Short boxes get a thread an output, long
// ones a block; when there are few outputs (a convolution bias's gradient: one a channel over N·H·W
// values) and their contributions add, each box is split across reduce_parts() blocks whose sums go to
// `workspace` (reduce_workspace_bytes()) and are added there in a fixed order.
cudaError_t launch_reduce(ReduceKind kind, const float* src, float* dst, int64_t n, const StridedLayout& layout,
                          int reduced_rank, const int64_t* reduced_dims, const int64_t* reduced_strides,
                          void* workspace, cudaStream_t stream);
// Blocks each of `outputs` boxes of `count` elements is split across (1: not split).
int64_t reduce_parts(ReduceKind kind, int64_t outputs, int64_t count);
// launch_reduce's workspace for these sizes: 0 unless split; never more than kReduceWorkspaceBound.
size_t reduce_workspace_bytes(ReduceKind kind, int64_t outputs, int64_t count);
constexpr int64_t kReduceSplitBlocks = 2048;  // fewer outputs than this may split: outputs · parts <= it
constexpr size_t kReduceWorkspaceBound = kReduceSplitBlocks * sizeof(double);

// ArgMax (max) or ArgMin: src viewed as [outer, count, inner], count >= 1; dst[o · inner + j] is the index
// along the middle dim of the first extreme of line (o, j), the last with `last`; a NaN is the extreme.
cudaError_t launch_arg_extreme(const float* src, int64_t* dst, int64_t outer, int64_t count, int64_t inner, bool max,
                               bool last, cudaStream_t stream);

}  // namespace ucudnn::cuda
