// The Reduce* family's and ArgMax/ArgMin's CUDA kernels (contracts: reduce_kernels.h). plan_reduce picks one
// of three paths from the shapes (Note [reduction paths]): kRows and kColumns for dense views with at most two
// reduced groups, split across blocks when the outputs are too few to fill the GPU; kBoxes, for the rest, is at
// most two sweeps over each output's box: the extreme (ReduceMax, ReduceMin, and ReduceLogSumExp's shift),
// then the sum or product of the contributions (runtime/ops/reduce_kind.h), finished by finish_reduction.
#include <cstdint>

#include "runtime/cuda/block_reduce.cuh"
#include "runtime/cuda/grid_loop.cuh"
#include "runtime/cuda/reduce_kernels.h"

namespace ucudnn::cuda {

// Note [reduction paths]
// plan_reduce drops the dims of size 1 and merges neighbouring dims that are both reduced or both kept. When
// that leaves [outer, rows, kept, inner] (any of outer, kept, inner may be absent) — at most two reduced
// groups, rows and inner, with the kept group between — and the boxes are long (count >= kBlockPerOutput),
// outputs (outer, kept) read their values one of two ways, without a division per value:
//  - kRows (inner >= 32, or fewer than 32 columns for kColumns): blocks read an output's rows × inner
//    values as one flat range, stepping (row, column) by the block size with a carry: a warp reads
//    consecutive values of a row. ReduceSum of an NCHW dY over {0, 2, 3} (a convolution bias's gradient:
//    rows N, kept C, inner H·W); a reduction over the last axes (rows 1).
//  - kColumns (inner < 32, kept · inner >= 32): a row's kept · inner values are consecutive columns; a
//    block's warps read 32 consecutive columns each, of different rows, a partial result per column, the
//    warps' partials then combined in order. The NHWC bias gradient over {0, 1, 2} (rows N·H·W, kept C).
// Each output's values are split into `parts` contiguous parts (of the flat range for kRows, of the rows for
// kColumns) so that about kTargetBlocks blocks run however few the outputs: 64 outputs of a block each left
// most of a 132-SM GPU idle. The first kernel writes each part's partial result (the sum or product of the
// contributions, or the extreme) to the workspace as [outer][part][kept][columns], columns = inner for
// kColumns (an output's inner values are separate columns) and 1 for kRows; combine_parts_kernel then
// combines each output's parts and columns in a fixed order (sums and products in double) and finishes.
// With one part and one column an output, the first kernel finishes itself and needs no workspace.
// `parts` comes from the shape alone, never the device, and there are no atomics: a result repeats bit for bit
// on any GPU. The summation order is not kBoxes' (nor the CPU's), so sums differ from those in the last bits;
// the op tests compare with a double reference within a tolerance. Max and min are exact, a NaN winning.
// ReduceLogSumExp needs its max before its sum (two sweeps over the whole box) and stays on kBoxes, with the
// short boxes and the other layouts.

namespace {

constexpr int64_t kBlockPerOutput = 128;  // reduced boxes at least this long get a block (or more) each
constexpr int64_t kTargetBlocks = 2048;   // blocks a split reduction aims at: a few waves on any GPU
constexpr int64_t kLeastPerThread = 16;   // values a thread reads in a part, at least (when the box has them)
constexpr int kWarp = 32;
constexpr int kColumnWidth = 32;                       // kColumns: columns a block (a warp's consecutive loads)
constexpr int kColumnLanes = kThreads / kColumnWidth;  // kColumns: rows a block reads at once

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

// kRows and kColumns: the plan's view (ReducePlan) as kernel arguments.
struct SplitView {
  int64_t n, count, outer, rows, kept, inner, parts;
  int64_t columns;  // partial results an output keeps a part: inner for kColumns, 1 for kRows
};

// What a value adds to a partial result and how two partial results combine, for the kinds off kBoxes:
// a sum of contributions, a product, or an extreme (max, min).
struct Partial {
  ReduceKind kind;
  __device__ bool extreme() const { return kind == ReduceKind::kMax || kind == ReduceKind::kMin; }
  __device__ float identity() const {
    if (extreme()) return kind == ReduceKind::kMax ? -INFINITY : INFINITY;
    return kind == ReduceKind::kProd ? 1.0f : 0.0f;
  }
  __device__ float add(float acc, float x) const {
    if (extreme()) return Extreme{kind == ReduceKind::kMax}(acc, x);
    return kind == ReduceKind::kProd ? acc * x : acc + contribution(kind, x, 0.0f);
  }
  __device__ float operator()(float a, float b) const {
    if (extreme()) return Extreme{kind == ReduceKind::kMax}(a, b);
    return kind == ReduceKind::kProd ? a * b : a + b;
  }
};

// A thread's walk through an output's rows × inner values, kThreads values a step: `at` = row · row_stride +
// column, the column kept for the carry into the next row. No division per value.
struct RowCursor {
  int64_t at, column, inner, row_stride, step_at, step_column;
  __device__ void next() {
    at += step_at;
    column += step_column;
    if (column >= inner) {  // step_column < inner, so one carry at most
      column -= inner;
      at += row_stride - inner;
    }
  }
};

// kRows: block (x, part) reduces part `part` of the flat rows × inner range of each output i = (o, c) among
// x, x + gridDim.x, ... into out[i] finished (finish: one part) or out[(o · parts + part) · kept + c] unfinished.
__global__ void reduce_rows_kernel(ReduceKind kind, const float* src, float* out, SplitView v, bool finish) {
  __shared__ float shared[32];
  const Partial op{kind};
  const int64_t chunk = (v.count + v.parts - 1) / v.parts, begin = blockIdx.y * chunk;
  const int64_t end = begin + chunk < v.count ? begin + chunk : v.count;
  const int64_t row_stride = v.kept * v.inner, first = begin + threadIdx.x;
  const int64_t step_column = kThreads % v.inner, step_at = kThreads / v.inner * row_stride + step_column;
  const int64_t first_at = first / v.inner * row_stride + first % v.inner;
  for (int64_t i = blockIdx.x; i < v.n; i += gridDim.x) {
    const int64_t o = i / v.kept, c = i % v.kept;
    const float* x = src + (o * v.rows * v.kept + c) * v.inner;  // row r of output i at x + r · row_stride
    RowCursor cursor{first_at, first % v.inner, v.inner, row_stride, step_at, step_column};
    float acc = op.identity();
    int64_t k = first;
    for (; k + 3 * kThreads < end; k += 4 * kThreads) {  // four loads in flight, added in order
      const float x0 = x[cursor.at];
      cursor.next();
      const float x1 = x[cursor.at];
      cursor.next();
      const float x2 = x[cursor.at];
      cursor.next();
      const float x3 = x[cursor.at];
      cursor.next();
      acc = op.add(op.add(op.add(op.add(acc, x0), x1), x2), x3);
    }
    for (; k < end; k += kThreads) {
      acc = op.add(acc, x[cursor.at]);
      cursor.next();
    }
    acc = block_reduce(acc, op, op.identity(), shared);
    if (threadIdx.x == 0) {
      if (finish) out[i] = finish_reduction(kind, acc, v.count, acc);
      else out[(o * v.parts + blockIdx.y) * v.kept + c] = acc;
    }
  }
}

// kColumns: block (x, part) reduces part `part` of the rows of 32 consecutive columns (x, x + gridDim.x, ...
// numbering (outer, column block)) into out[outer · width + column] finished (finish: one part, inner 1) or
// into out[(outer · parts + part) · width + column] unfinished; width = kept · inner.
__global__ void reduce_columns_kernel(ReduceKind kind, const float* src, float* out, SplitView v, bool finish) {
  __shared__ float shared[kColumnLanes][kColumnWidth];
  const Partial op{kind};
  const int lane = threadIdx.x % kColumnWidth, row_lane = threadIdx.x / kColumnWidth;
  const int64_t chunk = (v.rows + v.parts - 1) / v.parts, begin = blockIdx.y * chunk;
  const int64_t end = begin + chunk < v.rows ? begin + chunk : v.rows;
  const int64_t width = v.kept * v.inner, column_blocks = (width + kColumnWidth - 1) / kColumnWidth;
  const int64_t step = int64_t{kColumnLanes} * width;
  for (int64_t b = blockIdx.x; b < v.outer * column_blocks; b += gridDim.x) {
    const int64_t o = b / column_blocks, w = b % column_blocks * kColumnWidth + lane;
    float acc = op.identity();
    if (w < width) {
      int64_t r = begin + row_lane, at = (o * v.rows + r) * width + w;
      for (; r + 3 * kColumnLanes < end; r += 4 * kColumnLanes, at += 4 * step) {  // four loads in flight
        const float x0 = src[at], x1 = src[at + step], x2 = src[at + 2 * step], x3 = src[at + 3 * step];
        acc = op.add(op.add(op.add(op.add(acc, x0), x1), x2), x3);
      }
      for (; r < end; r += kColumnLanes, at += step) acc = op.add(acc, src[at]);
    }
    shared[row_lane][lane] = acc;
    __syncthreads();
    if (row_lane == 0 && w < width) {
      float total = shared[0][lane];
      for (int l = 1; l < kColumnLanes; ++l) total = op(total, shared[l][lane]);
      if (finish) out[o * width + w] = finish_reduction(kind, total, v.count, total);
      else out[(o * v.parts + blockIdx.y) * width + w] = total;
    }
    __syncthreads();  // shared is read before the next column block writes it
  }
}

// Output i = (o, c) of [outer, kept] from its parts' partial results, [outer][part][kept][columns], combined part
// by part and column by column in that order (sums and products in double).
__global__ void combine_parts_kernel(ReduceKind kind, const float* partial, float* dst, SplitView v) {
  const Partial op{kind};
  const int64_t part_stride = v.kept * v.columns;
  UCUDNN_GRID_LOOP(i, v.n) {
    const int64_t o = i / v.kept, c = i % v.kept;
    const float* p = partial + (o * v.parts * v.kept + c) * v.columns;
    if (op.extreme()) {
      float extreme = op.identity();
      for (int64_t part = 0; part < v.parts; ++part)
        for (int64_t j = 0; j < v.columns; ++j) extreme = op(extreme, p[part * part_stride + j]);
      dst[i] = finish_reduction(kind, 0.0, v.count, extreme);
    } else {
      const bool product = kind == ReduceKind::kProd;
      double acc = product ? 1.0 : 0.0;
      for (int64_t part = 0; part < v.parts; ++part)
        for (int64_t j = 0; j < v.columns; ++j) {
          const double x = p[part * part_stride + j];
          acc = product ? acc * x : acc + x;
        }
      dst[i] = finish_reduction(kind, acc, v.count, 0.0f);
    }
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

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Whether the first kernel finishes the outputs itself: one part, one partial result an output.
bool finishes_directly(const ReducePlan& plan) {
  return plan.parts == 1 && (plan.path == ReducePath::kRows || plan.inner == 1);
}

SplitView split_view(const ReducePlan& p) {
  return {p.n, p.count, p.outer, p.rows, p.kept, p.inner, p.parts, p.path == ReducePath::kColumns ? p.inner : 1};
}

// kRows and kColumns (Note [reduction paths]): the view, the path and the parts, when the merged dims are
// [outer, rows, kept, inner] and `kind` is not ReduceLogSumExp; else plan stays kBoxes.
void plan_split(ReduceKind kind, int rank, const int64_t* dims, uint32_t reduced_mask, ReducePlan* plan) {
  if (kind == ReduceKind::kLogSumExp || plan->n == 0 || plan->count < kBlockPerOutput) return;
  int64_t group[kMaxDims] = {};
  bool group_reduced[kMaxDims] = {};
  int groups = 0;
  for (int d = 0; d < rank; ++d) {
    if (dims[d] == 1) continue;
    const bool reduced = (reduced_mask >> d & 1u) != 0;
    if (groups > 0 && group_reduced[groups - 1] == reduced) {
      group[groups - 1] *= dims[d];
    } else {
      group[groups] = dims[d];
      group_reduced[groups] = reduced;
      ++groups;
    }
  }
  // Groups alternate, and count > 1 leaves a reduced one: [K] R [K [R]] is all the view takes.
  int g = 0;
  int64_t outer = 1, rows = 1, kept = 1, inner = 1;
  if (groups > 0 && !group_reduced[0]) outer = group[g++];
  const int left = groups - g;
  if (left < 1 || left > 3) return;
  if (left == 1) {
    inner = group[g];
  } else {
    rows = group[g];
    kept = group[g + 1];
    if (left == 3) inner = group[g + 2];
  }
  const int64_t width = kept * inner;
  const bool columns = inner < kWarp && width >= kColumnWidth;
  // Parts: enough to bring the blocks near kTargetBlocks, none below kLeastPerThread values a thread, no
  // empty one (chunks of ceil(span / parts), the last one short).
  const int64_t blocks = columns ? outer * ceil_div(width, kColumnWidth) : plan->n;
  const int64_t span = columns ? rows : plan->count;
  const int64_t wanted = ceil_div(span, kLeastPerThread * (columns ? kColumnLanes : kThreads));
  const int64_t cap = blocks < kTargetBlocks ? kTargetBlocks / blocks : 1;
  const int64_t parts = wanted < 1 ? 1 : (wanted < cap ? wanted : cap);
  plan->path = columns ? ReducePath::kColumns : ReducePath::kRows;
  plan->outer = outer;
  plan->rows = rows;
  plan->kept = kept;
  plan->inner = inner;
  plan->parts = ceil_div(span, ceil_div(span, parts));
}

}  // namespace

ReducePlan plan_reduce(ReduceKind kind, int rank, const int64_t* dims, uint32_t reduced_mask) {
  ReducePlan plan;
  int64_t strides[kMaxDims] = {}, stride = 1;
  for (int d = rank - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= dims[d];
  }
  plan.n = 1;
  plan.count = 1;
  plan.layout.rank = rank;
  for (int d = 0; d < rank; ++d) {
    const bool reduced = (reduced_mask >> d & 1u) != 0;
    plan.layout.dims[d] = reduced ? 1 : dims[d];
    plan.layout.strides[0][d] = strides[d];
    if (reduced) {
      plan.reduced_dims[plan.reduced_rank] = dims[d];
      plan.reduced_strides[plan.reduced_rank] = strides[d];
      ++plan.reduced_rank;
      plan.count *= dims[d];
    } else {
      plan.n *= dims[d];
    }
  }
  plan_split(kind, rank, dims, reduced_mask, &plan);
  return plan;
}

size_t reduce_workspace_bytes(const ReducePlan& plan) {
  if (plan.path == ReducePath::kBoxes || finishes_directly(plan)) return 0;
  return static_cast<size_t>(plan.n * plan.parts * split_view(plan).columns) * sizeof(float);
}

cudaError_t launch_reduce(ReduceKind kind, const float* src, float* dst, const ReducePlan& plan, void* workspace,
                          cudaStream_t stream) {
  if (plan.n == 0) return cudaSuccess;
  if (plan.path == ReducePath::kBoxes) {
    ReduceBox box;
    box.rank = plan.reduced_rank;
    for (int d = 0; d < plan.reduced_rank; ++d) {
      box.dims[d] = plan.reduced_dims[d];
      box.strides[d] = plan.reduced_strides[d];
      box.count *= plan.reduced_dims[d];
    }
    if (box.count >= kBlockPerOutput)
      reduce_block_kernel<<<row_blocks(plan.n), kThreads, 0, stream>>>(kind, src, dst, plan.n, plan.layout, box);
    else
      reduce_thread_kernel<<<blocks_for(plan.n), kThreads, 0, stream>>>(kind, src, dst, plan.n, plan.layout, box);
    return cudaGetLastError();
  }
  const bool direct = finishes_directly(plan);
  if (plan.parts < 1 || plan.parts > 65535 || (!direct && workspace == nullptr)) return cudaErrorInvalidValue;
  const SplitView v = split_view(plan);
  float* out = direct ? dst : static_cast<float*>(workspace);
  if (plan.path == ReducePath::kRows) {
    const dim3 grid(row_blocks(plan.n), static_cast<unsigned>(plan.parts));
    reduce_rows_kernel<<<grid, kThreads, 0, stream>>>(kind, src, out, v, direct);
  } else {
    const dim3 grid(row_blocks(plan.outer * ceil_div(plan.kept * plan.inner, kColumnWidth)),
                    static_cast<unsigned>(plan.parts));
    reduce_columns_kernel<<<grid, kThreads, 0, stream>>>(kind, src, out, v, direct);
  }
  if (!direct) combine_parts_kernel<<<blocks_for(plan.n), kThreads, 0, stream>>>(kind, out, dst, v);
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
