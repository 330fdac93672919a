// Launchers of the Reduce* family's and ArgMax/ArgMin's CUDA kernels (runtime/cuda/reduce_kernels.cu).
// Same contracts as kernels.h: each only queues work on `stream` and returns the launch error; int64 index
// arithmetic. Sums run in a fixed order (per-thread partial sums, then a tree in the block, then the parts
// in order, no atomics), so results repeat bit for bit from run to run; the split into blocks depends on the
// shapes alone, never on the GPU's size.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "runtime/cuda/kernels.h"
#include "runtime/ops/reduce_kind.h"

namespace ucudnn::ir {
struct Graph;
struct Node;
}  // namespace ucudnn::ir

namespace ucudnn::cuda {

// How a reduction runs (Note [reduction paths], reduce_kernels.cu). kRows and kColumns view the dense input
// as [outer, rows, kept, inner] with outputs (outer, kept), each reducing its rows × inner values.
enum class ReducePath { kBoxes, kRows, kColumns };

// A reduction's plan, fixed by plan_reduce from the shapes alone (never the device), so results do not
// depend on the GPU. Plain data: the kernel state keeps it from prepare to run.
struct ReducePlan {
  ReducePath path = ReducePath::kBoxes;
  int64_t n = 0;      // outputs
  int64_t count = 0;  // values each output reduces
  // kRows and kColumns: the view, and the parts each output's values are split across (>= 1).
  int64_t outer = 1, rows = 1, kept = 1, inner = 1, parts = 1;
  // kBoxes (today's general kernels): output i's base is layout (dims with reduced ones set to 1,
  // strides[0] the input's), its box spans reduced_dims / reduced_strides.
  StridedLayout layout;
  int reduced_rank = 0;
  int64_t reduced_dims[kMaxDims] = {}, reduced_strides[kMaxDims] = {};
};

// The plan reducing a dense row-major input of `rank` dims (<= kMaxDims) over the dims whose bit is set in
// `reduced_mask` (bit d: dim d).
ReducePlan plan_reduce(ReduceKind kind, int rank, const int64_t* dims, uint32_t reduced_mask);
// Workspace bytes launch_reduce needs for `plan`: the parts' partial results, 0 when none are kept.
size_t reduce_workspace_bytes(const ReducePlan& plan);

// dst[i] is the `kind` reduction (runtime/ops/reduce_kind.h) of output i's values, for plan_reduce's
// plan; `workspace` holds at least reduce_workspace_bytes(plan) bytes (may be null when that is 0).
cudaError_t launch_reduce(ReduceKind kind, const float* src, float* dst, const ReducePlan& plan, void* workspace,
                          cudaStream_t stream);

// ArgMax (max) or ArgMin: src viewed as [outer, count, inner], count >= 1; dst[o · inner + j] is the index
// along the middle dim of the first extreme of line (o, j), the last with `last`; a NaN is the extreme.
cudaError_t launch_arg_extreme(const float* src, int64_t* dst, int64_t outer, int64_t count, int64_t inner, bool max,
                               bool last, cudaStream_t stream);

}  // namespace ucudnn::cuda
