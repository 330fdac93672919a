// CPU kernels of Concat, Split, Slice, Transpose, Pad, Gather and Expand.
//
// Elements are moved by size (1, 2, 4 or 8 bytes), so every dtype works.
// Slice, Transpose and Expand (stride 0 along broadcast dims) are one strided copy: each output dim reads the input
// with some stride from some base offset; the output is walked row by row (a
// row = its last dim), rows split across threads; a Transpose that swaps two blocks of dims (NCHW <->
// NHWC, a 2-D transpose) copies in square tiles instead. Concat/Split/Gather copy
// contiguous blocks. Pad (constant mode) fills rows that fall outside the input
// and copies the overlapping span of the others; negative pads crop. Pad's reflect
// and edge modes map every output coordinate to its source (as the CUDA kernel).
// Parameters come from the same rules the shape rules use (data_movement.h).
#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <string>

#include "runtime/cpu/cpu_kernel.h"
#include "runtime/ops/data_movement.h"

namespace ucudnn::cpu {

namespace {

constexpr int64_t kParallelThreshold = 16384;

// Calls f with a value of an unsigned type as wide as one element of `dtype`.
template <typename F>
Status with_element_type(const ir::Node& node, DType dtype, F f) {
  switch (dtype_size(dtype)) {
    case 1: f(uint8_t{}); return Status::ok();
    case 2: f(uint16_t{}); return Status::ok();
    case 4: f(uint32_t{}); return Status::ok();
    case 8: f(uint64_t{}); return Status::ok();
    default: return unsupported(node.describe() + ": dtype " + dtype_name(dtype) + " is not supported");
  }
}

// Optional input i as int64s; absent gives an empty vector.
Expected<std::vector<int64_t>> optional_ints(const KernelArgs& args, size_t i) {
  if (i >= args.src.size() || args.src[i] == nullptr) return std::vector<int64_t>{};
  return args.src[i]->to_int64_vector();
}

// dst[o] = src[base + sum_d index_d(o) * strides[d]] for every o of out_shape.
template <typename T>
void strided_copy(const T* src, int64_t base, const std::vector<int64_t>& strides, const Shape& out_shape, T* dst) {
  const int64_t rank = static_cast<int64_t>(out_shape.size());
  const int64_t n = shape_numel(out_shape);
  if (rank == 0) {
    if (n == 1) dst[0] = src[base];
    return;
  }
  const int64_t inner = out_shape[rank - 1];
  const int64_t rows = inner == 0 ? 0 : n / inner;
  const int64_t inner_stride = strides[rank - 1];
#pragma omp parallel for schedule(static) if (n > kParallelThreshold)
  for (int64_t row = 0; row < rows; ++row) {
    int64_t offset = base, rest = row;
    for (int64_t d = rank - 2; d >= 0; --d) {
      offset += (rest % out_shape[d]) * strides[d];
      rest /= out_shape[d];
    }
    T* out = dst + row * inner;
    if (inner_stride == 1) {
      std::memcpy(out, src + offset, static_cast<size_t>(inner) * sizeof(T));
    } else {
      for (int64_t i = 0; i < inner; ++i) out[i] = src[offset + i * inner_stride];
    }
  }
}

Status run_concat(const KernelArgs& args) {
  Tensor& dst = *args.dst[0];
  const int64_t axis = normalize_axis(args.node.attrs.get_int("axis"), dst.rank());
  const size_t elem = dtype_size(dst.dtype());
  // Plain variables, not a structured binding: clang 14 cannot use one inside an OpenMP region.
  const AxisSplit split = split_at_axis(dst.shape(), axis);
  const int64_t outer = split.outer, inner = split.inner;
  const size_t dst_row = static_cast<size_t>(dst.dim(axis) * inner) * elem;
  char* out = static_cast<char*>(dst.raw());
  size_t column = 0;
  for (const Tensor* src : args.src) {
    const size_t src_row = static_cast<size_t>(src->dim(axis) * inner) * elem;
    const char* in = static_cast<const char*>(src->raw());
    if (src_row > 0) {
#pragma omp parallel for schedule(static) if (outer * static_cast<int64_t>(src_row) > kParallelThreshold * 4)
      for (int64_t o = 0; o < outer; ++o) std::memcpy(out + o * dst_row + column, in + o * src_row, src_row);
    }
    column += src_row;
  }
  return Status::ok();
}

Status run_split(const KernelArgs& args) {
  const Tensor& src = *args.src[0];
  const int64_t axis = normalize_axis(args.node.attrs.get_int("axis"), src.rank());
  const size_t elem = dtype_size(src.dtype());
  const AxisSplit split = split_at_axis(src.shape(), axis);
  const int64_t outer = split.outer, inner = split.inner;
  const size_t src_row = static_cast<size_t>(src.dim(axis) * inner) * elem;
  const char* in = static_cast<const char*>(src.raw());
  size_t column = 0;
  for (Tensor* dst : args.dst) {
    if (dst == nullptr) return unsupported(args.node.describe() + ": every output of Split must be used");
    const size_t dst_row = static_cast<size_t>(dst->dim(axis) * inner) * elem;
    char* out = static_cast<char*>(dst->raw());
    if (dst_row > 0) {
#pragma omp parallel for schedule(static) if (outer * static_cast<int64_t>(dst_row) > kParallelThreshold * 4)
      for (int64_t o = 0; o < outer; ++o) std::memcpy(out + o * dst_row, in + o * src_row + column, dst_row);
    }
    column += dst_row;
  }
  if (column != src_row)
    return internal_error(args.node.describe() + ": outputs do not add up to input " + src.describe());
  return Status::ok();
}

Status run_slice(const KernelArgs& args) {
  const Tensor& src = *args.src[0];
  Tensor& dst = *args.dst[0];
  UCUDNN_ASSIGN_OR_RETURN(auto starts, optional_ints(args, 1));
  UCUDNN_ASSIGN_OR_RETURN(auto ends, optional_ints(args, 2));
  UCUDNN_ASSIGN_OR_RETURN(auto axes, optional_ints(args, 3));
  UCUDNN_ASSIGN_OR_RETURN(auto steps, optional_ints(args, 4));
  auto p = resolve_slice(src.shape(), starts, ends, axes, steps);
  if (!p) return invalid_argument(args.node.describe() + ": " + p.status().message());
  if (p->out_shape != dst.shape())
    return internal_error(args.node.describe() + ": output " + dst.describe() + " does not match slice shape " +
                          shape_to_string(p->out_shape));
  const std::vector<int64_t> in_strides = shape_strides(src.shape());
  std::vector<int64_t> strides(in_strides.size());
  int64_t base = 0;
  for (size_t d = 0; d < strides.size(); ++d) {
    strides[d] = in_strides[d] * p->step[d];
    base += p->start[d] * in_strides[d];
  }
  return with_element_type(args.node, src.dtype(), [&](auto t) {
    using T = decltype(t);
    strided_copy<T>(src.data<T>(), base, strides, dst.shape(), dst.data<T>());
  });
}

// dst[b, q, r] = src[b, r, q] for src [batches, rows, cols] (dst [batches, cols, rows]), in tiles
// that keep both sides' cache lines in use: NCHW <-> NHWC is this with rows = C, cols = H·W.
template <typename T>
void batched_transpose(const T* src, T* dst, int64_t batches, int64_t rows, int64_t cols) {
  constexpr int64_t kTile = 32;
  const int64_t row_tiles = (rows + kTile - 1) / kTile, col_tiles = (cols + kTile - 1) / kTile;
  const int64_t tiles = batches * row_tiles * col_tiles;
#pragma omp parallel for schedule(static) if (batches * rows * cols > kParallelThreshold)
  for (int64_t t = 0; t < tiles; ++t) {
    const int64_t b = t / (row_tiles * col_tiles), r0 = (t / col_tiles) % row_tiles * kTile, c0 = t % col_tiles * kTile;
    const int64_t r1 = std::min(rows, r0 + kTile), c1 = std::min(cols, c0 + kTile);
    const T* in = src + b * rows * cols;
    T* out = dst + b * rows * cols;
    for (int64_t c = c0; c < c1; ++c)
      for (int64_t r = r0; r < r1; ++r) out[c * rows + r] = in[r * cols + c];
  }
}

// A transpose whose output dims (after dropping 1s and merging dims that stay adjacent) are
// [B, Q, R] of an input [B, R, Q] (B may be 1): {B, R, Q}; nullopt for any other permutation.
std::optional<std::array<int64_t, 3>> as_batched_transpose(const Shape& out_shape,
                                                           const std::vector<int64_t>& strides) {
  std::vector<int64_t> dims, merged_strides;
  for (size_t d = 0; d < out_shape.size(); ++d) {
    if (out_shape[d] == 1) continue;
    if (!dims.empty() && merged_strides.back() == strides[d] * out_shape[d]) {
      dims.back() *= out_shape[d];
      merged_strides.back() = strides[d];
      continue;
    }
    dims.push_back(out_shape[d]);
    merged_strides.push_back(strides[d]);
  }
  if (dims.size() == 2) {
    dims.insert(dims.begin(), 1);
    merged_strides.insert(merged_strides.begin(), dims[1] * dims[2]);
  }
  if (dims.size() != 3) return std::nullopt;
  const int64_t b = dims[0], q = dims[1], r = dims[2];
  if (merged_strides[1] != 1 || merged_strides[2] != q || merged_strides[0] != r * q) return std::nullopt;
  return std::array<int64_t, 3>{b, r, q};
}

Status run_transpose(const KernelArgs& args) {
  const Tensor& src = *args.src[0];
  Tensor& dst = *args.dst[0];
  const size_t rank = static_cast<size_t>(src.rank());
  std::vector<int64_t> perm(rank);
  if (args.node.attrs.has("perm")) {
    perm = args.node.attrs.get_ints("perm");
  } else {
    for (size_t i = 0; i < rank; ++i) perm[i] = static_cast<int64_t>(rank - 1 - i);
  }
  const std::vector<int64_t> in_strides = shape_strides(src.shape());
  std::vector<int64_t> strides(rank);
  for (size_t i = 0; i < rank; ++i) strides[i] = in_strides[perm[i]];
  const auto swap = as_batched_transpose(dst.shape(), strides);
  return with_element_type(args.node, src.dtype(), [&](auto t) {
    using T = decltype(t);
    if (swap)
      batched_transpose<T>(src.data<T>(), dst.data<T>(), (*swap)[0], (*swap)[1], (*swap)[2]);
    else
      strided_copy<T>(src.data<T>(), 0, strides, dst.shape(), dst.data<T>());
  });
}

template <typename T>
void pad_copy(const Tensor& src, Tensor& dst, const PadParams& p, T fill) {
  const Shape& out = dst.shape();
  const Shape& in = src.shape();
  const int64_t rank = static_cast<int64_t>(out.size());
  const T* s = src.data<T>();
  T* o = dst.data<T>();
  const int64_t n = dst.numel();
  if (rank == 0) {
    if (n == 1) o[0] = s[0];
    return;
  }
  const std::vector<int64_t> in_strides = shape_strides(in);
  const int64_t inner = out[rank - 1];
  const int64_t rows = inner == 0 ? 0 : n / inner;
  // The last dim's overlap with the input: output [lo, hi) reads input [lo - begin, hi - begin).
  const int64_t begin_last = p.begin[rank - 1];
  const int64_t lo = std::clamp<int64_t>(begin_last, 0, inner);
  const int64_t hi = std::clamp<int64_t>(begin_last + in[rank - 1], 0, inner);
#pragma omp parallel for schedule(static) if (n > kParallelThreshold)
  for (int64_t row = 0; row < rows; ++row) {
    T* out_row = o + row * inner;
    int64_t offset = 0, rest = row;
    bool inside = true;
    for (int64_t d = rank - 2; d >= 0; --d) {
      const int64_t i = rest % out[d] - p.begin[d];
      rest /= out[d];
      if (i < 0 || i >= in[d]) inside = false;
      offset += i * in_strides[d];
    }
    if (!inside || hi <= lo) {
      std::fill(out_row, out_row + inner, fill);
      continue;
    }
    std::fill(out_row, out_row + lo, fill);
    std::memcpy(out_row + lo, s + offset + (lo - begin_last), static_cast<size_t>(hi - lo) * sizeof(T));
    std::fill(out_row + hi, out_row + inner, fill);
  }
}

// The source index along an axis of `size` elements of output index `i` (already less the pad's
// begin) for Pad's reflect (mirrored about the edge elements; the shape rule keeps pads below the
// size) and edge modes.
int64_t padded_source(int64_t i, int64_t size, bool reflect) {
  if (i >= 0 && i < size) return i;
  if (!reflect) return i < 0 ? 0 : size - 1;
  const int64_t period = size > 1 ? 2 * (size - 1) : 1;
  i %= period;
  if (i < 0) i += period;
  return i >= size ? period - i : i;
}

// Pad in mode reflect or edge, row by row of the last axis.
template <typename T>
void pad_mapped(const Tensor& src, Tensor& dst, const PadParams& p, bool reflect) {
  const Shape& out = dst.shape();
  const Shape& in = src.shape();
  const int64_t rank = static_cast<int64_t>(out.size());
  const T* s = src.data<T>();
  T* o = dst.data<T>();
  const int64_t n = dst.numel();
  if (rank == 0 || n == 0) {
    if (n == 1) o[0] = s[0];
    return;
  }
  const std::vector<int64_t> in_strides = shape_strides(in);
  const int64_t inner = out[rank - 1], rows = n / inner, begin_last = p.begin[rank - 1], size_last = in[rank - 1];
#pragma omp parallel for schedule(static) if (n > kParallelThreshold)
  for (int64_t row = 0; row < rows; ++row) {
    int64_t offset = 0, rest = row;
    for (int64_t d = rank - 2; d >= 0; --d) {
      offset += padded_source(rest % out[d] - p.begin[d], in[d], reflect) * in_strides[d];
      rest /= out[d];
    }
    T* out_row = o + row * inner;
    for (int64_t j = 0; j < inner; ++j) out_row[j] = s[offset + padded_source(j - begin_last, size_last, reflect)];
  }
}

Status run_pad(const KernelArgs& args) {
  const Tensor& src = *args.src[0];
  Tensor& dst = *args.dst[0];
  const std::string& mode = args.node.attrs.get_string("mode");
  if (mode != "constant" && mode != "reflect" && mode != "edge")
    return unsupported(args.node.describe() + ": mode '" + mode + "' (constant, reflect and edge are supported)");
  UCUDNN_ASSIGN_OR_RETURN(auto pads, optional_ints(args, 1));
  UCUDNN_ASSIGN_OR_RETURN(auto axes, optional_ints(args, 3));
  auto p = resolve_pads(src.shape(), pads, axes);
  if (!p) return invalid_argument(args.node.describe() + ": " + p.status().message());
  if (p->out_shape != dst.shape())
    return internal_error(args.node.describe() + ": output " + dst.describe() + " does not match padded shape " +
                          shape_to_string(p->out_shape));
  if (mode != "constant")
    return with_element_type(args.node, src.dtype(), [&](auto t) {
      pad_mapped<decltype(t)>(src, dst, *p, mode == "reflect");
    });
  const Tensor* value = args.src.size() > 2 ? args.src[2] : nullptr;
  return with_element_type(args.node, src.dtype(), [&](auto t) {
    using T = decltype(t);
    T fill{};  // zero bits: 0 for every dtype
    if (value != nullptr && value->numel() == 1) std::memcpy(&fill, value->raw(), sizeof(T));
    pad_copy<T>(src, dst, *p, fill);
  });
}

Status run_gather(const KernelArgs& args) {
  const Tensor& data = *args.src[0];
  const Tensor& indices_tensor = *args.src[1];
  Tensor& dst = *args.dst[0];
  const int64_t axis = normalize_axis(args.node.attrs.get_int("axis"), data.rank());
  UCUDNN_ASSIGN_OR_RETURN(auto indices, indices_tensor.to_int64_vector());
  const int64_t dim = data.dim(axis);
  for (int64_t& i : indices) {
    if (i < -dim || i >= dim)
      return invalid_argument(args.node.describe() + ": index " + std::to_string(i) + " is out of range for axis " +
                              std::to_string(axis) + " of size " + std::to_string(dim) + " (data " +
                              data.describe() + ")");
    if (i < 0) i += dim;
  }
  const AxisSplit split = split_at_axis(data.shape(), axis);
  const int64_t outer = split.outer, inner = split.inner;
  const size_t block = static_cast<size_t>(inner) * dtype_size(data.dtype());
  const int64_t count = static_cast<int64_t>(indices.size());
  const char* in = static_cast<const char*>(data.raw());
  char* out = static_cast<char*>(dst.raw());
  if (block == 0) return Status::ok();
  const bool parallel = outer * count * static_cast<int64_t>(block) > kParallelThreshold * 4;
  // Blocks of 4 bytes (a float32 gather along the last axis: a channels-last shuffle) are a copy of
  // constant size: one move, not a call to memcpy per element.
  constexpr size_t kWord = 4;
  if (block == kWord) {
#pragma omp parallel for schedule(static) if (parallel)
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t k = 0; k < count; ++k)
        std::memcpy(out + (o * count + k) * kWord, in + (o * dim + indices[k]) * kWord, kWord);
    return Status::ok();
  }
  // Threads over (row, index): an NCHW shuffle at N = 1 has one row.
#pragma omp parallel for collapse(2) schedule(static) if (parallel)
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < count; ++k)
      std::memcpy(out + (o * count + k) * block, in + (o * dim + indices[k]) * block, block);
  return Status::ok();
}

Status run_expand(const KernelArgs& args) {
  const Tensor& src = *args.src[0];
  Tensor& dst = *args.dst[0];
  const Shape& in = src.shape();
  const Shape& out = dst.shape();
  if (in.size() > out.size())
    return internal_error(args.node.describe() + ": output " + dst.describe() + " has a lower rank than the input");
  // Input dims right-aligned with the output's; stride 0 where the input has size 1 (or no dim).
  const std::vector<int64_t> in_strides = shape_strides(in);
  const size_t shift = out.size() - in.size();
  std::vector<int64_t> strides(out.size(), 0);
  for (size_t d = shift; d < out.size(); ++d) strides[d] = in[d - shift] == 1 ? 0 : in_strides[d - shift];
  return with_element_type(args.node, src.dtype(), [&](auto t) {
    using T = decltype(t);
    strided_copy<T>(src.data<T>(), 0, strides, out, dst.data<T>());
  });
}

}  // namespace

const CpuKernel& cpu_kernel_Concat() {
  static const CpuKernel k{.run = run_concat};
  return k;
}
const CpuKernel& cpu_kernel_Split() {
  static const CpuKernel k{.run = run_split};
  return k;
}
const CpuKernel& cpu_kernel_Slice() {
  static const CpuKernel k{.run = run_slice};
  return k;
}
const CpuKernel& cpu_kernel_Transpose() {
  static const CpuKernel k{.run = run_transpose};
  return k;
}
const CpuKernel& cpu_kernel_Pad() {
  static const CpuKernel k{.run = run_pad};
  return k;
}
const CpuKernel& cpu_kernel_Gather() {
  static const CpuKernel k{.run = run_gather};
  return k;
}
const CpuKernel& cpu_kernel_Expand() {
  static const CpuKernel k{.run = run_expand};
  return k;
}

}  // namespace ucudnn::cpu
