// The bodies of FusedPointwise's CUDA kernels (Note [pointwise programs], runtime/ir/pointwise_program.h),
// templated on how the program runs (Note [generated pointwise kernels], runtime/cuda/pointwise_jit.h):
//   Interpreted  the instructions read from the parameters one by one, the registers in a local array
//                (fused_pointwise_kernels.cu, compiled by nvcc: any program);
//   a struct pointwise_jit.cc writes for one program: its instructions as straight-line code, the leaf
//                count fixed, so every register lives in a machine register (compiled by NVRTC).
// A Program has `static constexpr int kLeaves` (its leaf count, 0 when p.leaves says) and `static float
// run(const PointwiseParams&, float* reg)` (reg[0 .. leaves) loaded; returns the output). nvcc and NVRTC
// both compile this file, so it includes nothing but fused_pointwise_kernels.h.
//
// With a fixed leaf count the loops over leaves are unrolled (for_each_leaf), and loops over dims are
// unrolled to their limit with a guard, so that every array index is a constant. Index arithmetic is
// 32-bit (Index = int) when the output has at most 2^30 elements (every leaf and piece is no larger). Kernels: general (any leaf kind, an element a
// thread), vector (four elements a thread, 16-byte accesses; no concat leaf, strided leaves constant or
// contiguous over four elements of the innermost dim), concat (params.by_axis: a thread a column).
//
// Without a concat, dst may be a full leaf's own memory (Note [in-place pointwise],
// runtime/plan/liveness.cc): a thread reads its elements of every leaf before it writes them, and no
// thread reads an element another one writes, so even the read-only loads (__ldg) never see an
// element after it is written.
#pragma once

#include "runtime/cuda/fused_pointwise_kernels.h"

namespace ucudnn::cuda::device {

struct Interpreted {
  static constexpr int kLeaves = 0;  // not fixed: p.leaves
  __device__ static float run(const PointwiseParams& p, float* reg) {
    for (int i = 0; i < p.count; ++i)
      reg[p.leaves + i] = ir::eval_pointwise(static_cast<ir::PointwiseOp>(p.op[i]), reg[p.a[i]], reg[p.b[i]],
                                             p.p0[i], p.p1[i]);
    return reg[p.leaves + p.count - 1];
  }
};

// f(l) for the leaves l = first .. leaves-1: unrolled when the Program fixes their count (so that
// arrays indexed by l stay in registers), a plain loop for the interpreter.
template <typename Program, typename F>
__device__ __forceinline__ void for_each_leaf(const PointwiseParams& p, int first, F f) {
  if constexpr (Program::kLeaves > 0) {
#pragma unroll
    for (int l = first; l < Program::kLeaves; ++l) f(l);
  } else {
    for (int l = first; l < p.leaves; ++l) f(l);
  }
}

// The concat leaf at output index i (general kernel: the piece found by binary search).
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

// index[d]: output element i's index along the collapsed dim d < p.rank.
template <typename Index>
__device__ __forceinline__ void unravel(const PointwiseParams& p, Index i, Index* index) {
#pragma unroll
  for (int d = ir::kMaxPointwiseRank - 1; d > 0; --d) {
    if (d >= p.rank) continue;
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
#pragma unroll
  for (int d = 0; d < ir::kMaxPointwiseRank; ++d)
    if (d < p.rank) offset += index[d] * static_cast<Index>(p.strides[l][d]);
  return offset;
}

template <typename Program, typename Index>
__device__ __forceinline__ void general_kernel(const PointwiseParams& p, float* __restrict__ dst, Index n) {
  float reg[ir::kMaxPointwiseRegisters];
  for (Index i = blockIdx.x * static_cast<Index>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<Index>(blockDim.x) * gridDim.x) {
    Index index[ir::kMaxPointwiseRank];
    if (p.rank > 0) unravel(p, i, index);
    for_each_leaf<Program>(p, 0, [&](int l) {
      switch (p.kind[l]) {
        case PointwiseLeafKind::kFull: reg[l] = __ldg(p.data[l] + i); break;
        case PointwiseLeafKind::kScalar: reg[l] = __ldg(p.data[l]); break;
        case PointwiseLeafKind::kStrided: reg[l] = __ldg(p.data[l] + strided_offset(p, l, index)); break;
        case PointwiseLeafKind::kConcat: reg[l] = concat_value(p, i); break;
      }
    });
    dst[i] = Program::run(p, reg);
  }
}

__device__ __forceinline__ float component(const float4& v, int e) {
  return e == 0 ? v.x : e == 1 ? v.y : e == 2 ? v.z : v.w;
}

__device__ __forceinline__ float4 splat(float v) { return make_float4(v, v, v, v); }

// n4 = n / 4 groups of four elements; no concat leaf. With strided leaves the four lie in one row of
// the innermost collapsed dim (dims[rank - 1] % 4 == 0), over which each strided leaf has stride 0
// (one value for the four: an SE gate in NCHW) or 1 (four aligned ones: a per-channel bias in NHWC).
template <typename Program, typename Index>
__device__ __forceinline__ void vector_kernel(const PointwiseParams& p, float4* __restrict__ dst, Index n4) {
  float reg[ir::kMaxPointwiseRegisters];
  float4 loaded[ir::kMaxPointwiseLeaves];
  for (Index q = blockIdx.x * static_cast<Index>(blockDim.x) + threadIdx.x; q < n4;
       q += static_cast<Index>(blockDim.x) * gridDim.x) {
    Index index[ir::kMaxPointwiseRank];
    if (p.rank > 0) unravel(p, q * 4, index);
    for_each_leaf<Program>(p, 0, [&](int l) {
      if (p.kind[l] == PointwiseLeafKind::kFull) {
        loaded[l] = __ldg(reinterpret_cast<const float4*>(p.data[l]) + q);
      } else if (p.kind[l] == PointwiseLeafKind::kScalar) {
        loaded[l] = splat(__ldg(p.data[l]));
      } else {
        const float* at = p.data[l] + strided_offset(p, l, index);
        loaded[l] = p.strides[l][p.rank - 1] == 0 ? splat(__ldg(at)) : __ldg(reinterpret_cast<const float4*>(at));
      }
    });
    float out[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      for_each_leaf<Program>(p, 0, [&](int l) { reg[l] = component(loaded[l], e); });
      out[e] = Program::run(p, reg);
    }
    dst[q] = make_float4(out[0], out[1], out[2], out[3]);
  }
}

// params.by_axis: block (x, y) is tile x of its piece, rows y · blockDim.y + threadIdx.y and every
// gridDim.y · blockDim.y after; a thread's column fixes its axis position, so the other leaves are
// loaded once, and a warp reads and writes kConcatTile consecutive floats of a row.
template <typename Program>
__device__ __forceinline__ void concat_kernel(const PointwiseParams& p, float* __restrict__ dst) {
  const int tile = static_cast<int>(blockIdx.x);
  int piece = 0, hi = p.pieces - 1;  // the piece with tile_begin[piece] <= tile < tile_begin[piece + 1]
  while (piece < hi) {
    const int mid = (piece + hi + 1) / 2;
    if (p.tile_begin[mid] <= tile) piece = mid;
    else hi = mid - 1;
  }
  const int64_t first = p.begin[piece], cols = (p.begin[piece + 1] - first) * p.inner;
  const int64_t col = static_cast<int64_t>(tile - p.tile_begin[piece]) * kConcatTile + threadIdx.x;
  if (col >= cols) return;
  float reg[ir::kMaxPointwiseRegisters];
  const int64_t position = first + col / p.inner;
  for_each_leaf<Program>(p, 1, [&](int l) { reg[l] = __ldg(p.data[l] + position * p.axis_stride[l]); });
  const float* src = p.piece[piece] + col;
  float* out = dst + first * p.inner + col;
  const int64_t out_row = p.axis * p.inner, step = static_cast<int64_t>(blockDim.y) * gridDim.y;
  int64_t row = blockIdx.y * static_cast<int64_t>(blockDim.y) + threadIdx.y;
  // Four rows' loads in flight before their stores, then the rest one by one.
  for (; row + 3 * step < p.outer; row += 4 * step) {
    float in[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) in[k] = __ldg(src + (row + k * step) * cols);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      reg[0] = in[k];
      out[(row + k * step) * out_row] = Program::run(p, reg);
    }
  }
  for (; row < p.outer; row += step) {
    reg[0] = __ldg(src + row * cols);
    out[row * out_row] = Program::run(p, reg);
  }
}

}  // namespace ucudnn::cuda::device
