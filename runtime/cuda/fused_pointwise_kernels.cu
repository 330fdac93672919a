// FusedPointwise's CUDA kernel (see fused_pointwise_kernels.h): a grid-stride loop over the
// output; per element the leaves are loaded into registers 0 .. leaves-1 and the instructions run
// in order (eval_pointwise, the one definition the CPU shares). Index arithmetic is 32-bit when the
// output has at most 2^30 elements (every leaf and piece is no larger). Variants: general (any
// leaf kind) and float4 (full and scalar leaves only: four elements a thread, 16-byte accesses).
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

template <typename Index>
__global__ void fused_pointwise_kernel(const __grid_constant__ PointwiseParams p, float* __restrict__ dst, Index n) {
  float reg[ir::kMaxPointwiseRegisters];
  for (Index i = blockIdx.x * static_cast<Index>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<Index>(blockDim.x) * gridDim.x) {
    Index index[ir::kMaxPointwiseRank];
    Index rest = i;
    for (int d = p.rank - 1; d >= 0; --d) {
      const Index dim = static_cast<Index>(p.dims[d]);
      const Index q = rest / dim;
      index[d] = rest - q * dim;
      rest = q;
    }
    for (int l = 0; l < p.leaves; ++l) {
      switch (p.kind[l]) {
        case PointwiseLeafKind::kFull: reg[l] = __ldg(p.data[l] + i); break;
        case PointwiseLeafKind::kScalar: reg[l] = __ldg(p.data[l]); break;
        case PointwiseLeafKind::kStrided: {
          Index offset = 0;
          for (int d = 0; d < p.rank; ++d) offset += index[d] * static_cast<Index>(p.strides[l][d]);
          reg[l] = __ldg(p.data[l] + offset);
          break;
        }
        case PointwiseLeafKind::kConcat: reg[l] = concat_value(p, i); break;
      }
    }
    dst[i] = run_program(p, reg);
  }
}

__device__ __forceinline__ float component(const float4& v, int e) {
  return e == 0 ? v.x : e == 1 ? v.y : e == 2 ? v.z : v.w;
}

// n4 = n / 4 groups of four elements; every leaf kFull or kScalar.
__global__ void fused_pointwise_vector_kernel(const __grid_constant__ PointwiseParams p, float4* __restrict__ dst,
                                              int64_t n4) {
  float reg[ir::kMaxPointwiseRegisters];
  float4 loaded[ir::kMaxPointwiseLeaves];
  UCUDNN_GRID_LOOP(q, n4) {
    for (int l = 0; l < p.leaves; ++l) {
      if (p.kind[l] == PointwiseLeafKind::kFull) {
        loaded[l] = __ldg(reinterpret_cast<const float4*>(p.data[l]) + q);
      } else {
        const float s = __ldg(p.data[l]);
        loaded[l] = make_float4(s, s, s, s);
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
  if (vector) {
    fused_pointwise_vector_kernel<<<blocks_for(n / 4), kThreads, 0, stream>>>(params, reinterpret_cast<float4*>(dst),
                                                                              n / 4);
  } else if (n <= kMaxInt32Elements) {
    fused_pointwise_kernel<int32_t><<<blocks_for(n), kThreads, 0, stream>>>(params, dst, static_cast<int32_t>(n));
  } else {
    fused_pointwise_kernel<int64_t><<<blocks_for(n), kThreads, 0, stream>>>(params, dst, n);
  }
  return cudaGetLastError();
}

}  // namespace ucudnn::cuda
