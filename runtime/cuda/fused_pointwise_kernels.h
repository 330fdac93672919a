// Launcher of FusedPointwise's CUDA kernel (fused_pointwise_kernels.cu; Note [pointwise programs],
// runtime/ir/pointwise_program.h), callable from plain C++.
//
// The whole node travels as one by-value kernel parameter, PointwiseParams (about 2.5 KiB, under
// CUDA's 4 KiB): the program, each leaf's pointer and broadcast strides over the output's dims
// (collapsed where every leaf allows), the concat pieces. One thread evaluates the program for one
// output element at a time (grid-stride), its registers in a local array.
#pragma once

#if !defined(__CUDACC_RTC__)  // NVRTC compiles the types below too (Note [generated pointwise kernels])
#include <cuda_runtime_api.h>

#include <cstdint>
#endif

#include "runtime/ir/pointwise_program.h"

namespace ucudnn::cuda {

// How a leaf is read at output index i.
enum class PointwiseLeafKind : uint8_t {
  kFull,     // the output's shape: data[i]
  kScalar,   // one value: data[0]
  kStrided,  // data[Σ index_d · strides[d]] over the collapsed output dims
  kConcat,   // leaf 0 joined from the pieces along an axis (the output's shape)
};

struct PointwiseParams {
  int leaves = 0, count = 0;  // leaves, then `count` instructions
  uint8_t op[ir::kMaxPointwiseRegisters] = {}, a[ir::kMaxPointwiseRegisters] = {}, b[ir::kMaxPointwiseRegisters] = {};
  float p0[ir::kMaxPointwiseRegisters] = {}, p1[ir::kMaxPointwiseRegisters] = {};
  // The output's dims collapsed (dims of 1 dropped, neighbours merged where every strided leaf allows).
  int rank = 0;
  int64_t dims[ir::kMaxPointwiseRank] = {};
  PointwiseLeafKind kind[ir::kMaxPointwiseLeaves] = {};
  const float* data[ir::kMaxPointwiseLeaves] = {};
  int64_t strides[ir::kMaxPointwiseLeaves][ir::kMaxPointwiseRank] = {};
  // The concat leaf: the output viewed as [outer, axis, inner]; piece p covers axis positions
  // [begin[p], begin[p + 1]) and holds [outer, begin[p + 1] - begin[p], inner].
  int pieces = 0;
  int64_t outer = 1, axis = 0, inner = 1;
  const float* piece[ir::kMaxConcatPieces] = {};
  int64_t begin[ir::kMaxConcatPieces + 1] = {};
  // by_axis (launch_fused_pointwise_concat): every other leaf varies along the concat axis alone, leaf l's
  // value at axis position c being data[l][c · axis_stride[l]] (a per-channel BN scale, a scalar);
  // piece p's columns [0, (begin[p + 1] - begin[p]) · inner) are cut in tiles of kConcatTile, tiles
  // [tile_begin[p], tile_begin[p + 1]) of the grid.
  bool by_axis = false;
  int64_t axis_stride[ir::kMaxPointwiseLeaves] = {};
  int32_t tile_begin[ir::kMaxConcatPieces + 1] = {};
};

// Columns of one tile of launch_fused_pointwise_concat: a warp's.
inline constexpr int kConcatTile = 32;

// Whether a kernel over n output elements indexes in 32 bits: i + a grid's stride (at most
// 2^20 · kThreads = 2^28) stays below 2^31.
inline constexpr bool pointwise_index32(int64_t n) { return n <= (int64_t{1} << 30); }

#if !defined(__CUDACC_RTC__)
// FusedPointwise kernels NVRTC compiled for one program (Note [generated pointwise kernels],
// runtime/cuda/pointwise_jit.h), each taking (PointwiseParams, its output, its count) as the
// interpreter's; a null one: the interpreter's kernel runs instead.
struct GeneratedPointwiseKernels {
  const void* general = nullptr;  // (params, float* dst, Index n)
  const void* vector = nullptr;   // (params, float4* dst, Index n / 4)
  const void* concat = nullptr;   // (params, float* dst)
  bool index32 = true;            // Index = int32_t, else int64_t (as they were written)
};

// dst[i] = the program's last register at output element i, for i < n. `vector` (float4 loads and
// stores): n % 4 == 0, no kConcat leaf, dst and the kFull leaves 16-byte aligned; with kStrided
// leaves dims[rank - 1] % 4 == 0 and each one's strides[rank - 1] is 0, or 1 with its other
// strides multiples of 4 and its data 16-byte aligned.
cudaError_t launch_fused_pointwise(const PointwiseParams& params, float* dst, int64_t n, bool vector,
                                   const GeneratedPointwiseKernels& generated, cudaStream_t stream);

// The same with params.by_axis: dst, the output viewed as [outer, axis, inner], is written piece by
// piece, each thread streaming one column of a piece down its rows (the other leaves loaded once).
cudaError_t launch_fused_pointwise_concat(const PointwiseParams& params, float* dst,
                                          const GeneratedPointwiseKernels& generated, cudaStream_t stream);
#endif

}  // namespace ucudnn::cuda
