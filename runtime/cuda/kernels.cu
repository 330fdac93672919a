// ucudnn's own CUDA kernels (see kernels.h for the contracts). One file so CI
// (2 cores) compiles one nvcc unit. All kernels are grid-stride loops over the
// output, 256 threads a block, so consecutive threads touch consecutive outputs.
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "runtime/core/dtype.h"
#include "runtime/cuda/grid_loop.cuh"
#include "runtime/cuda/kernels.h"

namespace ucudnn::cuda {

namespace {

// Element offset of output index i in operand `which` of `layout`.
__device__ __forceinline__ int64_t strided_offset(const StridedLayout& layout, int which, int64_t i) {
  int64_t offset = layout.offset[which];
  for (int d = layout.rank - 1; d >= 0; --d) {
    const int64_t dim = layout.dims[d];
    offset += (i % dim) * layout.strides[which][d];
    i /= dim;
  }
  return offset;
}

// A lone node computing Op: ir::eval_unary_node (Note [one formula per op], runtime/ir/pointwise_program.h).
template <ir::PointwiseOp Op>
__global__ void unary_kernel(const float* src, float* dst, int64_t n, float p0, float p1) {
  UCUDNN_GRID_LOOP(i, n) dst[i] = ir::eval_unary_node(Op, src[i], p0, p1);
}

// The bounds are read by every thread (one cached load each), so the host never waits for them.
__global__ void clip_kernel(const float* src, float* dst, int64_t n, const float* low, const float* high) {
  const float lo = low != nullptr ? *low : -INFINITY, hi = high != nullptr ? *high : INFINITY;
  UCUDNN_GRID_LOOP(i, n) dst[i] = ir::eval_unary_node(ir::PointwiseOp::kClip, src[i], lo, hi);
}

__device__ __forceinline__ float apply_binary(BinaryOp op, float a, float b) {
  switch (op) {
    case BinaryOp::kAdd: return a + b;
    case BinaryOp::kSub: return a - b;
    case BinaryOp::kMul: return a * b;
    case BinaryOp::kDiv: return a / b;
    case BinaryOp::kPow: return powf(a, b);
    case BinaryOp::kPRelu: return a >= 0.0f ? a : a * b;
    case BinaryOp::kAddRelu: return fmaxf(a + b, 0.0f);
    case BinaryOp::kMod:
    case BinaryOp::kFmod: return fmodf(a, b);
    case BinaryOp::kMax: return a > b || isnan(a) ? a : b;  // a NaN operand gives NaN (as the CPU's)
    case BinaryOp::kMin: return a < b || isnan(a) ? a : b;
  }
  return a;
}

template <BinaryOp Op>
__global__ void binary_contiguous_kernel(const float* a, const float* b, float* dst, int64_t n) {
  UCUDNN_GRID_LOOP(i, n) dst[i] = apply_binary(Op, a[i], b[i]);
}

template <BinaryOp Op>
__global__ void binary_strided_kernel(const float* a, const float* b, float* dst, int64_t n, StridedLayout layout) {
  UCUDNN_GRID_LOOP(i, n) dst[i] = apply_binary(Op, a[strided_offset(layout, 0, i)], b[strided_offset(layout, 1, i)]);
}

// Integer Add/Sub/Mul/Div as the CPU computes them (kernels.h): in the unsigned type, so
// overflow wraps without undefined behaviour; Div by -1 negates (no INT_MIN / -1 fault)
// and by 0 gives 0 (refused by the caller before launching).
template <BinaryOp Op, typename T>
__device__ __forceinline__ T apply_integer_binary(T a, T b) {
  using U = std::make_unsigned_t<T>;
  const U ua = static_cast<U>(a), ub = static_cast<U>(b);
  if constexpr (Op == BinaryOp::kAdd) {
    return static_cast<T>(ua + ub);
  } else if constexpr (Op == BinaryOp::kSub) {
    return static_cast<T>(ua - ub);
  } else if constexpr (Op == BinaryOp::kMul) {
    return static_cast<T>(ua * ub);
  } else if constexpr (Op == BinaryOp::kDiv) {
    if (b == T(-1)) return static_cast<T>(U(0) - ua);
    return b == T(0) ? T(0) : static_cast<T>(a / b);
  } else if constexpr (Op == BinaryOp::kMax) {
    return a > b ? a : b;
  } else if constexpr (Op == BinaryOp::kMin) {
    return a < b ? a : b;
  } else {
    static_assert(Op == BinaryOp::kMod || Op == BinaryOp::kFmod,
                  "integer binary ops: Add, Sub, Mul, Div, Mod, Max, Min");
    const T r = b == T(0) || b == T(-1) ? T(0) : static_cast<T>(a % b);
    return Op == BinaryOp::kMod && r != 0 && ((r < 0) != (b < 0)) ? static_cast<T>(r + b) : r;
  }
}

template <BinaryOp Op, typename T>
__global__ void integer_binary_kernel(const T* a, const T* b, T* dst, int64_t n, StridedLayout layout,
                                      bool contiguous) {
  if (contiguous) {
    UCUDNN_GRID_LOOP(i, n) dst[i] = apply_integer_binary<Op>(a[i], b[i]);
  } else {
    UCUDNN_GRID_LOOP(i, n)
      dst[i] = apply_integer_binary<Op>(a[strided_offset(layout, 0, i)], b[strided_offset(layout, 1, i)]);
  }
}

template <typename T>
cudaError_t queue_integer_binary(BinaryOp op, const void* a, const void* b, void* dst, int64_t n,
                                 const StridedLayout& layout, bool contiguous, cudaStream_t stream) {
  const auto* ta = static_cast<const T*>(a);
  const auto* tb = static_cast<const T*>(b);
  auto* td = static_cast<T*>(dst);
  const unsigned blocks = blocks_for(n);
  switch (op) {
#define UCUDNN_INTEGER_BINARY_CASE(name)                                                                           \
  case BinaryOp::name:                                                                                             \
    integer_binary_kernel<BinaryOp::name, T><<<blocks, kThreads, 0, stream>>>(ta, tb, td, n, layout, contiguous); \
    break;
    UCUDNN_INTEGER_BINARY_CASE(kAdd)
    UCUDNN_INTEGER_BINARY_CASE(kSub)
    UCUDNN_INTEGER_BINARY_CASE(kMul)
    UCUDNN_INTEGER_BINARY_CASE(kDiv)
    UCUDNN_INTEGER_BINARY_CASE(kMod)
    UCUDNN_INTEGER_BINARY_CASE(kFmod)
    UCUDNN_INTEGER_BINARY_CASE(kMax)
    UCUDNN_INTEGER_BINARY_CASE(kMin)
#undef UCUDNN_INTEGER_BINARY_CASE
    default: return cudaErrorInvalidValue;  // PRelu and the fused Add + Relu are float32 only
  }
  return cudaGetLastError();
}

template <typename T>
__global__ void strided_copy_kernel(const T* src, T* dst, int64_t n, StridedLayout layout) {
  UCUDNN_GRID_LOOP(i, n) dst[i] = src[strided_offset(layout, 0, i)];
}

constexpr int kTile = 32;
constexpr int kTileRows = 8;  // a 32×8 block moves a 32×32 tile, 4 elements a thread

// Block (x, y, z) = (column tile, row tile, batch); grid y and z are capped at
// 65535, so large dims loop.
__global__ void batched_transpose_kernel(const uint32_t* src, uint32_t* dst, int64_t batch, int64_t rows,
                                         int64_t cols) {
  __shared__ uint32_t tile[kTile][kTile + 1];  // +1: no shared-memory bank conflicts
  for (int64_t b = blockIdx.z; b < batch; b += gridDim.z) {
    const uint32_t* s = src + b * rows * cols;
    uint32_t* d = dst + b * rows * cols;
    for (int64_t r0 = int64_t{blockIdx.y} * kTile; r0 < rows; r0 += int64_t{gridDim.y} * kTile) {
      const int64_t c0 = int64_t{blockIdx.x} * kTile;
      for (int i = threadIdx.y; i < kTile; i += kTileRows) {
        const int64_t r = r0 + i, c = c0 + threadIdx.x;
        if (r < rows && c < cols) tile[i][threadIdx.x] = s[r * cols + c];
      }
      __syncthreads();
      for (int i = threadIdx.y; i < kTile; i += kTileRows) {
        const int64_t c = c0 + i, r = r0 + threadIdx.x;
        if (c < cols && r < rows) d[c * rows + r] = tile[threadIdx.x][i];
      }
      __syncthreads();
    }
  }
}

// The same transpose when rows or cols is below a tile (NCHW → NHWC of an RGB
// image: rows = C = 3): one output element a thread, writes coalesced, reads
// from `rows` (or `cols`) short contiguous runs. Index is 32-bit when it fits.
template <typename Index>
__global__ void narrow_transpose_kernel(const uint32_t* src, uint32_t* dst, Index n, Index rows, Index cols) {
  for (Index i = blockIdx.x * Index{blockDim.x} + threadIdx.x; i < n; i += Index{blockDim.x} * gridDim.x) {
    const Index r = i % rows, t = i / rows;  // dst[b][c][r]
    const Index c = t % cols, b = t / cols;
    dst[i] = src[(b * rows + r) * cols + c];
  }
}

struct PadParams {
  int64_t src_dims[kMaxDims];
  int64_t pad_begin[kMaxDims];
};

template <typename T>
__global__ void pad_kernel(const T* src, T* dst, int64_t n, StridedLayout layout, PadParams p, PadMode mode,
                           T value) {
  UCUDNN_GRID_LOOP(i, n) {
    int64_t rest = i, offset = 0;
    bool inside = true;
    for (int d = layout.rank - 1; d >= 0; --d) {
      int64_t s = rest % layout.dims[d] - p.pad_begin[d];
      rest /= layout.dims[d];
      const int64_t size = p.src_dims[d];
      if (s < 0 || s >= size) {
        if (mode == PadMode::kConstant) inside = false;
        else if (mode == PadMode::kEdge) s = s < 0 ? 0 : size - 1;
        else {  // reflect: mirrored about the edge elements (Pad's shape rule keeps its pads below the size)
          const int64_t period = size > 1 ? 2 * (size - 1) : 1;
          s = s % period;
          if (s < 0) s += period;
          if (s >= size) s = period - s;
        }
      }
      offset += s * layout.strides[0][d];
    }
    dst[i] = inside ? src[offset] : value;
  }
}

template <typename T>
__global__ void constant_pad_kernel(const T* src, T* dst, int64_t n, StridedLayout layout, PadParams p,
                                    const T* value_on_device, T value) {
  const T fill = value_on_device != nullptr ? *value_on_device : value;
  UCUDNN_GRID_LOOP(i, n) {
    int64_t rest = i, offset = 0;
    bool inside = true;
    for (int d = layout.rank - 1; d >= 0; --d) {
      const int64_t s = rest % layout.dims[d] - p.pad_begin[d];
      rest /= layout.dims[d];
      inside = inside && s >= 0 && s < p.src_dims[d];
      offset += s * layout.strides[0][d];
    }
    dst[i] = inside ? src[offset] : fill;
  }
}

template <typename T>
void queue_constant_pad(const void* src, void* dst, int64_t n, const StridedLayout& layout, const PadParams& p,
                        const void* value_on_device, uint64_t value_bits, cudaStream_t stream) {
  T value;
  memcpy(&value, &value_bits, sizeof(T));  // the low bytes on a little-endian host
  constant_pad_kernel<<<blocks_for(n), kThreads, 0, stream>>>(static_cast<const T*>(src), static_cast<T*>(dst), n,
                                                              layout, p, static_cast<const T*>(value_on_device), value);
}

template <typename T, typename Index>
__global__ void gather_kernel(const T* src, const Index* indices, T* dst, int64_t outer, int64_t axis_dim,
                              int64_t count, int64_t inner) {
  const int64_t n = outer * count * inner;
  UCUDNN_GRID_LOOP(i, n) {
    const int64_t r = i % inner;
    const int64_t j = (i / inner) % count;
    const int64_t o = i / (inner * count);
    int64_t index = static_cast<int64_t>(indices[j]);
    if (index < 0) index += axis_dim;
    index = index < 0 ? 0 : (index >= axis_dim ? axis_dim - 1 : index);
    dst[i] = src[(o * axis_dim + index) * inner + r];
  }
}

template <typename From, typename To>
__global__ void cast_kernel(const From* src, To* dst, int64_t n) {
  UCUDNN_GRID_LOOP(i, n) dst[i] = static_cast<To>(src[i]);
}

template <typename From>
cudaError_t cast_from(const From* src, int dst_dtype, void* dst, int64_t n, cudaStream_t stream) {
  const unsigned blocks = blocks_for(n);
  switch (static_cast<DType>(dst_dtype)) {
#define UCUDNN_CAST_CASE(name, type, code) \
  case DType::k##name: cast_kernel<From, type><<<blocks, kThreads, 0, stream>>>(src, static_cast<type*>(dst), n); break;
    UCUDNN_FOR_EACH_DTYPE(UCUDNN_CAST_CASE)
#undef UCUDNN_CAST_CASE
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_unary(ir::PointwiseOp op, const float* src, float* dst, int64_t n, float p0, float p1,
                         cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  const unsigned blocks = blocks_for(n);
  switch (op) {
#define UCUDNN_UNARY_CASE(name)                                                                             \
  case ir::PointwiseOp::k##name:                                                                            \
    unary_kernel<ir::PointwiseOp::k##name><<<blocks, kThreads, 0, stream>>>(src, dst, n, p0, p1); \
    break;
    UCUDNN_FOR_EACH_UNARY_NODE_OP(UCUDNN_UNARY_CASE)
    UCUDNN_UNARY_CASE(Clip)
#undef UCUDNN_UNARY_CASE
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t launch_clip(const float* src, float* dst, int64_t n, const float* low, const float* high,
                        cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  clip_kernel<<<blocks_for(n), kThreads, 0, stream>>>(src, dst, n, low, high);
  return cudaGetLastError();
}

cudaError_t launch_binary(BinaryOp op, const float* a, const float* b, float* dst, int64_t n,
                          const StridedLayout& layout, bool contiguous, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  const unsigned blocks = blocks_for(n);
  switch (op) {
#define UCUDNN_BINARY_CASE(name)                                                                     \
  case BinaryOp::name:                                                                               \
    if (contiguous) binary_contiguous_kernel<BinaryOp::name><<<blocks, kThreads, 0, stream>>>(a, b, dst, n); \
    else binary_strided_kernel<BinaryOp::name><<<blocks, kThreads, 0, stream>>>(a, b, dst, n, layout);       \
    break;
    UCUDNN_BINARY_CASE(kAdd)
    UCUDNN_BINARY_CASE(kSub)
    UCUDNN_BINARY_CASE(kMul)
    UCUDNN_BINARY_CASE(kDiv)
    UCUDNN_BINARY_CASE(kPow)
    UCUDNN_BINARY_CASE(kPRelu)
    UCUDNN_BINARY_CASE(kAddRelu)
    UCUDNN_BINARY_CASE(kMod)
    UCUDNN_BINARY_CASE(kFmod)
    UCUDNN_BINARY_CASE(kMax)
    UCUDNN_BINARY_CASE(kMin)
#undef UCUDNN_BINARY_CASE
  }
  return cudaGetLastError();
}

cudaError_t launch_integer_binary(BinaryOp op, int dtype, const void* a, const void* b, void* dst, int64_t n,
                                  const StridedLayout& layout, bool contiguous, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  switch (static_cast<DType>(dtype)) {
    case DType::kInt32: return queue_integer_binary<int32_t>(op, a, b, dst, n, layout, contiguous, stream);
    case DType::kInt64: return queue_integer_binary<int64_t>(op, a, b, dst, n, layout, contiguous, stream);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t launch_strided_copy(const void* src, void* dst, size_t element_bytes, int64_t n,
                                const StridedLayout& layout, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  const unsigned blocks = blocks_for(n);
  switch (element_bytes) {
    case 1: strided_copy_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const uint8_t*>(src), static_cast<uint8_t*>(dst), n, layout); break;
    case 2: strided_copy_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const uint16_t*>(src), static_cast<uint16_t*>(dst), n, layout); break;
    case 4: strided_copy_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const uint32_t*>(src), static_cast<uint32_t*>(dst), n, layout); break;
    case 8: strided_copy_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const uint64_t*>(src), static_cast<uint64_t*>(dst), n, layout); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t launch_batched_transpose(const void* src, void* dst, int64_t batch, int64_t rows, int64_t cols,
                                     cudaStream_t stream) {
  if (batch == 0 || rows == 0 || cols == 0) return cudaSuccess;
  if (rows < kTile || cols < kTile) {  // a 32×32 tile would leave most of its threads idle
    const int64_t n = batch * rows * cols;
    auto* d = static_cast<uint32_t*>(dst);
    const auto* s = static_cast<const uint32_t*>(src);
    if (n < (int64_t{1} << 31))
      narrow_transpose_kernel<uint32_t><<<blocks_for(n), kThreads, 0, stream>>>(
          s, d, static_cast<uint32_t>(n), static_cast<uint32_t>(rows), static_cast<uint32_t>(cols));
    else
      narrow_transpose_kernel<int64_t><<<blocks_for(n), kThreads, 0, stream>>>(s, d, n, rows, cols);
    return cudaGetLastError();
  }
  const int64_t col_tiles = (cols + kTile - 1) / kTile, row_tiles = (rows + kTile - 1) / kTile;
  if (col_tiles > 0x7fffffff) return cudaErrorInvalidValue;
  const dim3 grid(static_cast<unsigned>(col_tiles), static_cast<unsigned>(row_tiles < 65535 ? row_tiles : 65535),
                  static_cast<unsigned>(batch < 65535 ? batch : 65535));
  batched_transpose_kernel<<<grid, dim3(kTile, kTileRows), 0, stream>>>(static_cast<const uint32_t*>(src),
                                                                         static_cast<uint32_t*>(dst), batch, rows, cols);
  return cudaGetLastError();
}

namespace {

// The kernels' copy of a Pad's source dims and begin pads.
PadParams pad_params(const StridedLayout& layout, const int64_t* src_dims, const int64_t* pad_begin) {
  PadParams p{};
  for (int d = 0; d < layout.rank; ++d) {
    p.src_dims[d] = src_dims[d];
    p.pad_begin[d] = pad_begin[d];
  }
  return p;
}

// pad_kernel in mode kEdge or kReflect over elements of type T (the value is never read).
template <typename T>
void queue_pad_by_mode(const void* src, void* dst, int64_t n, const StridedLayout& layout, const PadParams& p,
                       PadMode mode, cudaStream_t stream) {
  pad_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(static_cast<const T*>(src), static_cast<T*>(dst), n, layout,
                                                        p, mode, T{});
}

}  // namespace

cudaError_t launch_pad(const float* src, float* dst, int64_t n, const StridedLayout& layout,
                       const int64_t* src_dims, const int64_t* pad_begin, PadMode mode, float value,
                       cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  const PadParams p = pad_params(layout, src_dims, pad_begin);
  pad_kernel<float><<<blocks_for(n), kThreads, 0, stream>>>(src, dst, n, layout, p, mode, value);
  return cudaGetLastError();
}

cudaError_t launch_pad_by_mode(const void* src, void* dst, size_t element_bytes, int64_t n,
                               const StridedLayout& layout, const int64_t* src_dims, const int64_t* pad_begin,
                               PadMode mode, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  const PadParams p = pad_params(layout, src_dims, pad_begin);
  switch (element_bytes) {
    case 1: queue_pad_by_mode<uint8_t>(src, dst, n, layout, p, mode, stream); break;
    case 2: queue_pad_by_mode<uint16_t>(src, dst, n, layout, p, mode, stream); break;
    case 4: queue_pad_by_mode<uint32_t>(src, dst, n, layout, p, mode, stream); break;
    case 8: queue_pad_by_mode<uint64_t>(src, dst, n, layout, p, mode, stream); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t launch_constant_pad(const void* src, void* dst, size_t element_bytes, int64_t n,
                                const StridedLayout& layout, const int64_t* src_dims, const int64_t* pad_begin,
                                const void* value_on_device, uint64_t value_bits, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  const PadParams p = pad_params(layout, src_dims, pad_begin);
  switch (element_bytes) {
    case 1: queue_constant_pad<uint8_t>(src, dst, n, layout, p, value_on_device, value_bits, stream); break;
    case 2: queue_constant_pad<uint16_t>(src, dst, n, layout, p, value_on_device, value_bits, stream); break;
    case 4: queue_constant_pad<uint32_t>(src, dst, n, layout, p, value_on_device, value_bits, stream); break;
    case 8: queue_constant_pad<uint64_t>(src, dst, n, layout, p, value_on_device, value_bits, stream); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t launch_gather(const void* src, const void* indices, bool indices32, void* dst, size_t element_bytes,
                          int64_t outer, int64_t axis_dim, int64_t count, int64_t inner, cudaStream_t stream) {
  const int64_t n = outer * count * inner;
  if (n == 0) return cudaSuccess;
  const unsigned blocks = blocks_for(n);
#define UCUDNN_GATHER(T)                                                                                    \
  if (indices32)                                                                                            \
    gather_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const T*>(src), static_cast<const int32_t*>(indices), \
                                                   static_cast<T*>(dst), outer, axis_dim, count, inner);     \
  else                                                                                                      \
    gather_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const T*>(src), static_cast<const int64_t*>(indices), \
                                                   static_cast<T*>(dst), outer, axis_dim, count, inner);
  switch (element_bytes) {
    case 1: UCUDNN_GATHER(uint8_t) break;
    case 4: UCUDNN_GATHER(uint32_t) break;
    case 8: UCUDNN_GATHER(uint64_t) break;
    default: return cudaErrorInvalidValue;
  }
#undef UCUDNN_GATHER
  return cudaGetLastError();
}

cudaError_t launch_cast(const void* src, int src_dtype, void* dst, int dst_dtype, int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  switch (static_cast<DType>(src_dtype)) {
#define UCUDNN_CAST_FROM(name, type, code) \
  case DType::k##name: return cast_from(static_cast<const type*>(src), dst_dtype, dst, n, stream);
    UCUDNN_FOR_EACH_DTYPE(UCUDNN_CAST_FROM)
#undef UCUDNN_CAST_FROM
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace ucudnn::cuda
