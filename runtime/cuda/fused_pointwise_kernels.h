// Launcher of FusedPointwise's CUDA kernel (fused_pointwise_kernels.cu; Note [pointwise programs],
// runtime/ir/pointwise_program.h), callable from plain C++.
//
// The whole node travels as one by-value kernel parameter, PointwiseParams (about 2.5 KiB, under
// CUDA's 4 KiB): the program, each leaf's pointer and broadcast strides over the output's dims
// (collapsed where every leaf allows), the concat pieces. One thread evaluates the program for one
// output element at a time (grid-stride), its registers in a local array.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

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
  int64_t axis = 0, inner = 1;
  const float* piece[ir::kMaxConcatPieces] = {};
  int64_t begin[ir::kMaxConcatPieces + 1] = {};
};

// dst[i] = the program's last register at output element i, for i < n. `vector`: every leaf is
// kFull or kScalar, the kFull ones and dst 16-byte aligned and n % 4 == 0 (float4 loads and stores).
cudaError_t launch_fused_pointwise(const PointwiseParams& params, float* dst, int64_t n, bool vector,
                                   cudaStream_t stream);

}  // namespace ucudnn::cuda
