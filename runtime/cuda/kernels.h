// Launchers of ucudnn's own CUDA kernels (runtime/cuda/kernels.cu), callable
// from plain C++: elementwise activations, broadcasting binary ops (float32;
// int32/int64 Add/Sub/Mul/Div), strided copies (Slice, Transpose, broadcast
// fills), Pad, Gather, Cast.
//
// Every launcher only queues work on `stream` and returns the launch error
// (cudaSuccess when queued). Index arithmetic is int64; shapes up to kMaxDims.
// Consecutive threads write consecutive output elements (coalesced stores).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "runtime/ir/pointwise_program.h"

namespace ucudnn::cuda {

inline constexpr int kMaxDims = 8;

// Output dims plus, per operand, the element stride of each output dim
// (0 where the operand is broadcast), and a starting element offset.
struct StridedLayout {
  int rank = 0;
  int64_t dims[kMaxDims] = {};
  int64_t strides[2][kMaxDims] = {};
  int64_t offset[2] = {0, 0};
};

// dst[i] = ir::eval_unary_node(op, src[i], p0, p1) (Note [lone-node forms], runtime/ir/pointwise_program.h)
// for an op of UCUDNN_FOR_EACH_UNARY_NODE_OP or Clip (p0, p1: its bounds); cudaErrorInvalidValue for another.
cudaError_t launch_unary(ir::PointwiseOp op, const float* src, float* dst, int64_t n, float p0, float p1,
                         cudaStream_t stream);

// Clip with bounds computed at run time: dst[i] = min(max(src[i], *low), *high),
// the bounds read on the device (no host sync); nullptr: no bound on that side.
cudaError_t launch_clip(const float* src, float* dst, int64_t n, const float* low, const float* high,
                        cudaStream_t stream);

enum class BinaryOp {
  kAdd, kSub, kMul, kDiv, kPow, kPRelu, kAddRelu /* Add with a fused Relu */,
  kMod /* the divisor's sign (Python's %) */, kFmod /* the dividend's sign (C's %, fmodf) */,
  kMax, kMin /* a NaN operand gives NaN */
};
// dst[i] = a[...] op b[...]; `layout` maps output index i to both operands'
// elements (strides[0] for a, strides[1] for b). `contiguous`: both are dense
// with the output's shape (no index arithmetic).
cudaError_t launch_binary(BinaryOp op, const float* a, const float* b, float* dst, int64_t n,
                          const StridedLayout& layout, bool contiguous, cudaStream_t stream);

// launch_binary on int32 or int64 operands (`dtype`: a ucudnn::DType as an int) for kAdd, kSub, kMul, kDiv,
// kMod, kFmod, kMax and kMin, with the CPU's results (runtime/cpu/binary.cc): overflow wraps (two's
// complement), Div truncates toward zero and x / -1 is the wrapped negation (INT_MIN / -1 = INT_MIN). A zero
// divisor gives 0: callers refuse one before launching. cudaErrorInvalidValue for another op or dtype.
cudaError_t launch_integer_binary(BinaryOp op, int dtype, const void* a, const void* b, void* dst, int64_t n,
                                  const StridedLayout& layout, bool contiguous, cudaStream_t stream);

// dst[i] = src[offset[0] + Σ index_d · strides[0][d]] for elements of `element_bytes` (1, 2, 4 or 8).
cudaError_t launch_strided_copy(const void* src, void* dst, size_t element_bytes, int64_t n,
                                const StridedLayout& layout, cudaStream_t stream);

// Batched 2-D transpose of 4-byte elements: dst[b][c][r] = src[b][r][c] for
// b < batch, r < rows, c < cols; 32×32 tiles through shared memory, so reads and
// writes are both coalesced (below a tile in rows or cols: one element a
// thread). NCHW → NHWC is rows = C, cols = H·W (and back with rows = H·W,
// cols = C), the channels-last pass's Transposes.
cudaError_t launch_batched_transpose(const void* src, void* dst, int64_t batch, int64_t rows, int64_t cols,
                                     cudaStream_t stream);

enum class PadMode { kConstant, kEdge, kReflect };
// Pad (also negative pads = crops): dst dims layout.dims; src dims in `src_dims`,
// pad_begin per dim; out-of-range positions take `value` (constant) or map by mode.
cudaError_t launch_pad(const float* src, float* dst, int64_t n, const StridedLayout& layout,
                       const int64_t* src_dims, const int64_t* pad_begin, PadMode mode, float value,
                       cudaStream_t stream);

// Pad in mode kEdge or kReflect of elements of `element_bytes` (1, 2, 4 or 8; any dtype), as launch_pad.
cudaError_t launch_pad_by_mode(const void* src, void* dst, size_t element_bytes, int64_t n,
                               const StridedLayout& layout, const int64_t* src_dims, const int64_t* pad_begin,
                               PadMode mode, cudaStream_t stream);

// Constant-mode Pad of elements of `element_bytes` (1, 2, 4 or 8; any dtype), as
// launch_pad: out-of-range positions take *value_on_device when that is not
// nullptr (a pad value computed at run time, read on the device), else the
// element whose bytes are the low `element_bytes` of `value_bits`.
cudaError_t launch_constant_pad(const void* src, void* dst, size_t element_bytes, int64_t n,
                                const StridedLayout& layout, const int64_t* src_dims, const int64_t* pad_begin,
                                const void* value_on_device, uint64_t value_bits, cudaStream_t stream);

// Gather along one axis viewed as [outer, axis_dim, inner]: dst = [outer, count, inner].
// Indices are int64 (or int32 when `indices32`); negative ones count from the end;
// indices out of range are clamped, never read outside src (callers refuse them first: checked at load
// when they are constants, else read on the host before launching).
cudaError_t launch_gather(const void* src, const void* indices, bool indices32, void* dst, size_t element_bytes,
                          int64_t outer, int64_t axis_dim, int64_t count, int64_t inner, cudaStream_t stream);

// dst[i] = (To)src[i]; dtypes are ucudnn::DType values as ints.
cudaError_t launch_cast(const void* src, int src_dtype, void* dst, int dst_dtype, int64_t n, cudaStream_t stream);

}  // namespace ucudnn::cuda
