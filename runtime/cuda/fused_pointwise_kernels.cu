// FusedPointwise's CUDA kernel (see fused_pointwise_kernels.h): a grid-stride loop over the
// output; per element the leaves are loaded into registers 0 .. leaves-1 and the instructions run
// in order (eval_pointwise, the one definition the CPU shares). Index arithmetic is 32-bit when the
// output has at most 2^30 elements (every leaf and piece is no larger). Variants: general (any
// leaf kind), float4 (four elements a thread, 16-byte accesses; no concat leaf, strided leaves
// constant or contiguous over four elements of the innermost dim) and
// concat (the concat leaf with every other leaf varying along its axis alone: a thread a column).
#include <algorithm>
#include <cstdint>

#include "runtime/cuda/fused_pointwise_kernels.h"
#include "runtime/cuda/grid_loop.cuh"

namespace ucudnn::cuda {

namespace {

static_assert(sizeof(PointwiseParams) <= 4096, "PointwiseParams must fit CUDA's kernel parameter space");

// Below this, 32-bit indices: i + the grid's stride (at most 2^20 · kThreads = 2^28) stays below 2^31.
constexpr int64_t kMaxInt32Elements = int64_t{1} << 30;

using ir::PointwiseOp;

// Runs the instructions on reg (leaves already loaded); returns the last register.
__device__ __forceinline__ float run_program(const PointwiseParams& p, float* reg) {
  for (int i = 0; i < p.count; ++i)
    reg[p.leaves + i] =
        ir::eval_pointwise(static_cast<PointwiseOp>(p.op[i]), reg[p.a[i]], reg[p.b[i]], p.p0[i], p.p1[i]);
  return reg[p.leaves + p.count - 1];
}

// The concat leaf at output index i.
template <typename Index>
__device__ __forceinline__ float concat_value(const PointwiseParams& p, Index i) {
  const Index inner = static_cast<Index>(p.inner), axis = static_cast<Index>(p.axis);
  const Index row = i / inner, within = i - row * inner;
  const Index outer = row / axis, position = row - outer * axis;
  int lo = 0, hi = p.pieces - 1;  // the piece with begin[piece] <= position < begin[piece + 1]
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (static_cast<Index>(p.begin[mid]) <= position) lo = mid;
    else hi = mid - 1;
  }
  const Index first = static_cast<Index>(p.begin[lo]), size = static_cast<Index>(p.begin[lo + 1]) - first;
  return __ldg(p.piece[lo] + (outer * size + position - first) * inner + within);
}

// index[d]: output element i's index along the collapsed dim d.
template <typename Index>
__device__ __forceinline__ void unravel(const PointwiseParams& p, Index i, Index* index) {
  for (int d = p.rank - 1; d > 0; --d) {
    const Index dim = static_cast<Index>(p.dims[d]);
    const Index q = i / dim;
    index[d] = i - q * dim;
    i = q;
  }
  index[0] = i;
}

// Strided leaf l's offset at the collapsed index.
template <typename Index>
__device__ __forceinline__ Index strided_offset(const PointwiseParams& p, int l, const Index* index) {
  Index offset = 0;
  for (int d = 0; d < p.rank; ++d) offset += index[d] * static_cast<Index>(p.strides[l][d]);
  return offset;
}

template <typename Index>
__global__ void fused_pointwise_kernel(const __grid_constant__ PointwiseParams p, float* __restrict__ dst, Index n) {
  float reg[ir::kMaxPointwiseRegisters];
  for (Index i = blockIdx.x * static_cast<Index>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<Index>(blockDim.x) * gridDim.x) {
    Index index[ir::kMaxPointwiseRank];
    if (p.rank > 0) unravel(p, i, index);
    for (int l = 0; l < p.leaves; ++l) {
      switch (p.kind[l]) {
        case PointwiseLeafKind::kFull: reg[l] = __ldg(p.data[l] + i); break;
        case PointwiseLeafKind::kScalar: reg[l] = __ldg(p.data[l]); break;
        case PointwiseLeafKind::kStrided: reg[l] = __ldg(p.data[l] + strided_offset(p, l, index)); break;
        case PointwiseLeafKind::kConcat: reg[l] = concat_value(p, i); break;
      }
    }
    dst[i] = run_program(p, reg);
  }
}

// params.by_axis: block (x, y) is tile x of its piece, rows y · blockDim.y + threadIdx.y and every
// gridDim.y · blockDim.y after; a thread's column fixes its axis position, so the other leaves are
// loaded once, and a warp reads and writes kConcatTile consecutive floats of a row.
__global__ void fused_pointwise_concat_kernel(const __grid_constant__ PointwiseParams p, float* __restrict__ dst) {
  const int tile = static_cast<int>(blockIdx.x);
  int piece = 0, hi = p.pieces - 1;  // the piece with tile_begin[piece] <= tile < tile_begin[piece + 1]
  while (piece < hi) {
    const int mid = (piece + hi + 1) / 2;
    if (p.tile_begin[mid] <= tile) piece = mid;
    else hi = mid - 1;
  }
  const int64_t first = p.begin[piece], cols = (p.begin[piece + 1] - first) * p.inner;
  const int64_t col = int64_t{tile - p.tile_begin[piece]} * kConcatTile + threadIdx.x;
  if (col >= cols) return;
  float reg[ir::kMaxPointwiseRegisters];
  const int64_t position = first + col / p.inner;
  for (int l = 1; l < p.leaves; ++l) reg[l] = __ldg(p.data[l] + position * p.axis_stride[l]);
  const float* src = p.piece[piece] + col;
  float* out = dst + first * p.inner + col;
  const int64_t out_row = p.axis * p.inner;
  for (int64_t row = blockIdx.y * int64_t{blockDim.y} + threadIdx.y; row < p.outer;
       row += int64_t{blockDim.y} * gridDim.y) {
    reg[0] = __ldg(src + row * cols);
    out[row * out_row] = run_program(p, reg);
  }
}

__device__ __forceinline__ float component(const float4& v, int e) {
  return e == 0 ? v.x : e == 1 ? v.y : e == 2 ? v.z : v.w;
}

__device__ __forceinline__ float4 splat(float v) { return make_float4(v, v, v, v); }

// n4 = n / 4 groups of four elements; no concat leaf. With strided leaves the four lie in one row of
// the innermost collapsed dim (dims[rank - 1] % 4 == 0), over which each strided leaf has stride 0
// (one value for the four: an SE gate in NCHW) or 1 (four aligned ones: a per-channel bias in NHWC).
template <typename Index>
__global__ void fused_pointwise_vector_kernel(const __grid_constant__ PointwiseParams p, float4* __restrict__ dst,
                                              Index n4) {
  float reg[ir::kMaxPointwiseRegisters];
  float4 loaded[ir::kMaxPointwiseLeaves];
  for (Index q = blockIdx.x * static_cast<Index>(blockDim.x) + threadIdx.x; q < n4;
       q += static_cast<Index>(blockDim.x) * gridDim.x) {
    Index index[ir::kMaxPointwiseRank];
    if (p.rank > 0) unravel(p, q * 4, index);
    for (int l = 0; l < p.leaves; ++l) {
      if (p.kind[l] == PointwiseLeafKind::kFull) {
        loaded[l] = __ldg(reinterpret_cast<const float4*>(p.data[l]) + q);
      } else if (p.kind[l] == PointwiseLeafKind::kScalar) {
        loaded[l] = splat(__ldg(p.data[l]));
      } else {
        const float* at = p.data[l] + strided_offset(p, l, index);
        loaded[l] = p.strides[l][p.rank - 1] == 0 ? splat(__ldg(at)) : __ldg(reinterpret_cast<const float4*>(at));
      }
    }
    float out[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      for (int l = 0; l < p.leaves; ++l) reg[l] = component(loaded[l], e);
      out[e] = run_program(p, reg);
    }
    dst[q] = make_float4(out[0], out[1], out[2], out[3]);
  }
}

}  // namespace

cudaError_t launch_fused_pointwise(const PointwiseParams& params, float* dst, int64_t n, bool vector,
                                   cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  if (vector && n <= kMaxInt32Elements) {
    fused_pointwise_vector_kernel<int32_t>
        <<<blocks_for(n / 4), kThreads, 0, stream>>>(params, reinterpret_cast<float4*>(dst), static_cast<int32_t>(n / 4));
  } else if (vector) {
    fused_pointwise_vector_kernel<int64_t>
        <<<blocks_for(n / 4), kThreads, 0, stream>>>(params, reinterpret_cast<float4*>(dst), n / 4);
  } else if (n <= kMaxInt32Elements) {
    fused_pointwise_kernel<int32_t><<<blocks_for(n), kThreads, 0, stream>>>(params, dst, static_cast<int32_t>(n));
  } else {
    fused_pointwise_kernel<int64_t><<<blocks_for(n), kThreads, 0, stream>>>(params, dst, n);
  }
  return cudaGetLastError();
}

cudaError_t launch_fused_pointwise_concat(const PointwiseParams& params, float* dst, cudaStream_t stream) {
  const int tiles = params.tile_begin[params.pieces];
  if (tiles == 0 || params.outer == 0) return cudaSuccess;
  constexpr int kRows = kThreads / kConcatTile;  // a block's rows at a time
  // About 2^13 blocks in all (a few waves on any GPU); each block's rows at least once.
  const int64_t row_blocks = std::min<int64_t>((params.outer + kRows - 1) / kRows, std::max(1, 8192 / tiles));
  const dim3 grid(static_cast<unsigned>(tiles), static_cast<unsigned>(std::min<int64_t>(row_blocks, 65535)));
  fused_pointwise_concat_kernel<<<grid, dim3(kConcatTile, kRows), 0, stream>>>(params, dst);
  return cudaGetLastError();
}

}  // namespace ucudnn::cuda
