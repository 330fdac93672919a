// CUDA kernels of the data-movement and shape ops: Flatten, Reshape, Squeeze,
// Unsqueeze, Identity, Dropout (inference: a device-to-device copy; Dropout's
// mask is all true), Concat and Split (cudaMemcpy2DAsync: one strided copy per
// input/output, no kernel), Slice, Transpose and Expand (the strided-copy kernel;
// Expand reads broadcast dims with stride 0),
// Pad (constant mode, any dtype, the value constant or read on the device, as the
// CPU kernel), Gather, Cast, Shape, Size, Constant, Range and EyeLike
// (values known at load, copied from the host).
//
// Shape-like inputs (Slice's starts, Pad's pads, Gather's constant indices) are
// read at prepare from the graph's constants; values only known at run time
// are reported as Unsupported there.
#include <cstring>

#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/cuda_kernel.h"
#include "runtime/cuda/elementwise.h"
#include "runtime/ops/data_movement.h"
#include "runtime/ops/generators.h"

namespace ucudnn::cuda {

namespace {

using StateOr = Expected<std::unique_ptr<KernelState>>;

Expected<std::vector<int64_t>> constant_ints(const PrepareArgs& a, size_t i, const char* what) {
  if (!a.has_src(i)) return std::vector<int64_t>{};
  const Tensor* t = a.constant(i);
  if (t == nullptr) return a.unsupported_error(std::string(what) + " computed at run time (only constants)");
  return t->to_int64_vector();
}

// ---- copies ------------------------------------------------------------------

class CopyState final : public KernelState {
 public:
  Status run(const RunArgs& a) override {
    if (a.dst[0].data != a.src[0].data && a.dst[0].nbytes() > 0)
      UCUDNN_CUDA_CHECK(cudaMemcpyAsync(a.dst[0].data, a.src[0].data, a.dst[0].nbytes(), cudaMemcpyDeviceToDevice,
                                        a.ctx.stream()),
                        "");
    for (size_t i = 1; i < a.dst.size(); ++i)  // Dropout's mask: all true in inference
      if (a.dst[i].data != nullptr && a.dst[i].nbytes() > 0)
        UCUDNN_CUDA_CHECK(cudaMemsetAsync(a.dst[i].data, 1, a.dst[i].nbytes(), a.ctx.stream()), "mask");
    return Status::ok();
  }
};

StateOr prepare_copy(const PrepareArgs&) { return std::unique_ptr<KernelState>(std::make_unique<CopyState>()); }

// Host values known at load (Shape, Constant), copied in at run.
class HostValueState final : public KernelState {
 public:
  Tensor value;
  Status run(const RunArgs& a) override {
    if (value.nbytes() > 0)
      UCUDNN_CUDA_CHECK(cudaMemcpyAsync(a.dst[0].data, value.raw(), value.nbytes(), cudaMemcpyHostToDevice,
                                        a.ctx.stream()),
                        "");
    return Status::ok();
  }
  bool capturable() const override { return value.nbytes() == 0; }  // a copy from pageable host memory
};

StateOr prepare_constant(const PrepareArgs& a) {
  auto s = std::make_unique<HostValueState>();
  UCUDNN_ASSIGN_OR_RETURN(s->value, a.node.attrs.get_tensor("value").clone());
  return std::unique_ptr<KernelState>(std::move(s));
}

// Range and EyeLike: their values computed at prepare (runtime/ops/generators.h), as the CPU's.
StateOr prepare_range(const PrepareArgs& a) {
  const Tensor* start = a.constant(0);
  const Tensor* limit = a.constant(1);
  const Tensor* delta = a.constant(2);
  if (start == nullptr || limit == nullptr || delta == nullptr)
    return a.unsupported_error("start, limit and delta computed at run time (only constants)");
  auto s = std::make_unique<HostValueState>();
  UCUDNN_ASSIGN_OR_RETURN(s->value, range_values(*start, *limit, *delta, a.describe()));
  return std::unique_ptr<KernelState>(std::move(s));
}

StateOr prepare_eye_like(const PrepareArgs& a) {
  auto s = std::make_unique<HostValueState>();
  UCUDNN_ASSIGN_OR_RETURN(s->value, eye_like_values(a.src_shapes[0], a.graph.value(a.node.outputs[0]).dtype,
                                                    a.node.attrs.get_int("k")));
  return std::unique_ptr<KernelState>(std::move(s));
}

StateOr prepare_shape(const PrepareArgs& a) {
  const Shape& in = a.src_shapes[0];
  const int64_t rank = static_cast<int64_t>(in.size());
  auto clamp = [rank](int64_t v) { return std::min(std::max(v < 0 ? v + rank : v, int64_t{0}), rank); };
  const int64_t start = clamp(a.node.attrs.get_int("start"));
  const int64_t end = a.node.attrs.has("end") ? clamp(a.node.attrs.get_int("end")) : rank;
  std::vector<int64_t> dims;
  for (int64_t d = start; d < end; ++d) dims.push_back(in[d]);
  auto s = std::make_unique<HostValueState>();
  s->value = Tensor::from_int64s({static_cast<int64_t>(dims.size())}, dims);
  return std::unique_ptr<KernelState>(std::move(s));
}

StateOr prepare_size(const PrepareArgs& a) {
  auto s = std::make_unique<HostValueState>();
  const int64_t numel = shape_numel(a.src_shapes[0]);
  s->value = Tensor::from_int64s({}, std::span<const int64_t>(&numel, 1));
  return std::unique_ptr<KernelState>(std::move(s));
}

// ---- Concat / Split: row copies ------------------------------------------------

class RowsState final : public KernelState {
 public:
  bool split = false;     // false: inputs → one output (Concat); true: one input → outputs (Split)
  size_t outer = 1;       // rows
  size_t row_bytes = 0;   // bytes of one row of the big tensor
  std::vector<size_t> part_bytes;  // bytes of one row of each part
  Status run(const RunArgs& a) override {
    size_t column = 0;
    const size_t parts = part_bytes.size();
    for (size_t p = 0; p < parts; ++p) {
      const size_t width = part_bytes[p];
      if (width > 0 && outer > 0) {
        if (split) {
          if (a.dst[p].data == nullptr) return unsupported("every output of Split must be used");
          UCUDNN_CUDA_CHECK(cudaMemcpy2DAsync(a.dst[p].data, width, static_cast<const char*>(a.src[0].data) + column,
                                              row_bytes, width, outer, cudaMemcpyDeviceToDevice, a.ctx.stream()),
                            "output " + std::to_string(p));
        } else {
          UCUDNN_CUDA_CHECK(cudaMemcpy2DAsync(static_cast<char*>(a.dst[0].data) + column, row_bytes, a.src[p].data,
                                              width, width, outer, cudaMemcpyDeviceToDevice, a.ctx.stream()),
                            "input " + std::to_string(p));
        }
      }
      column += width;
    }
    return Status::ok();
  }
};

StateOr prepare_rows(const PrepareArgs& a, bool split) {
  const Shape& big = split ? a.src_shapes[0] : a.dst_shapes[0];
  const int64_t axis = normalize_axis(a.node.attrs.get_int("axis"), static_cast<int64_t>(big.size()));
  if (axis < 0) return invalid_argument(a.describe() + ": axis out of range");
  auto s = std::make_unique<RowsState>();
  s->split = split;
  const size_t elem = dtype_size(split ? a.src_dtype(0) : a.src_dtype(0));
  const AxisSplit around_axis = split_at_axis(big, axis);
  s->outer = static_cast<size_t>(around_axis.outer);
  const size_t inner = elem * static_cast<size_t>(around_axis.inner);
  s->row_bytes = inner * static_cast<size_t>(big[axis]);
  const std::vector<Shape>& parts = split ? a.dst_shapes : a.src_shapes;
  for (const Shape& p : parts) s->part_bytes.push_back(inner * static_cast<size_t>(p.empty() ? 0 : p[axis]));
  if (!split)
    for (size_t i = 0; i < parts.size(); ++i)
      if (!a.has_src(i)) return a.unsupported_error("absent Concat input");
  if (split && a.has_src(1) && a.constant(1) == nullptr) return a.unsupported_error("split sizes computed at run time");
  return std::unique_ptr<KernelState>(std::move(s));
}

// ---- strided copies: Slice, Transpose ----------------------------------------

class StridedCopyState final : public KernelState {
 public:
  StridedLayout layout;
  size_t element_bytes = 4;
  Status run(const RunArgs& a) override {
    UCUDNN_CUDA_CHECK(launch_strided_copy(a.src[0].data, a.dst[0].data, element_bytes, a.dst[0].numel(), layout,
                                          a.ctx.stream()),
                      "");
    return Status::ok();
  }
};

StateOr prepare_slice(const PrepareArgs& a) {
  const Shape& in = a.src_shapes[0];
  if (in.size() > static_cast<size_t>(kMaxDims)) return a.unsupported_error("rank above 8");
  UCUDNN_ASSIGN_OR_RETURN(std::vector<int64_t> starts, constant_ints(a, 1, "starts"));
  UCUDNN_ASSIGN_OR_RETURN(std::vector<int64_t> ends, constant_ints(a, 2, "ends"));
  UCUDNN_ASSIGN_OR_RETURN(std::vector<int64_t> axes, constant_ints(a, 3, "axes"));
  UCUDNN_ASSIGN_OR_RETURN(std::vector<int64_t> steps, constant_ints(a, 4, "steps"));
  auto p = resolve_slice(in, starts, ends, axes, steps);
  if (!p) return invalid_argument(a.describe() + ": " + p.status().message());
  auto s = std::make_unique<StridedCopyState>();
  s->element_bytes = dtype_size(a.src_dtype(0));
  const std::vector<int64_t> strides = shape_strides(in);
  s->layout.rank = static_cast<int>(in.size());
  for (size_t d = 0; d < in.size(); ++d) {
    s->layout.dims[d] = p->out_shape[d];
    s->layout.strides[0][d] = strides[d] * p->step[d];
    s->layout.offset[0] += p->start[d] * strides[d];
  }
  return std::unique_ptr<KernelState>(std::move(s));
}

StateOr prepare_expand(const PrepareArgs& a) {
  auto s = std::make_unique<StridedCopyState>();
  s->element_bytes = dtype_size(a.src_dtype(0));
  if (!set_broadcast_layout(a.dst_shapes[0], a.src_shapes[0], 0, &s->layout))
    return a.unsupported_error("rank above " + std::to_string(kMaxDims));
  return std::unique_ptr<KernelState>(std::move(s));
}

// A Transpose that swaps the last two of three dims [B, R, C] → [B, C, R]
// after merging neighbours, e.g. NCHW ↔ NHWC (perm 0,2,3,1 and 0,3,1,2).
class BatchedTransposeState final : public KernelState {
 public:
  int64_t batch = 0, rows = 0, cols = 0;
  Status run(const RunArgs& a) override {
    UCUDNN_CUDA_CHECK(launch_batched_transpose(a.src[0].data, a.dst[0].data, batch, rows, cols, a.ctx.stream()), "");
    return Status::ok();
  }
};

StateOr prepare_transpose(const PrepareArgs& a) {
  const Shape& in = a.src_shapes[0];
  const size_t rank = in.size();
  if (rank > static_cast<size_t>(kMaxDims)) return a.unsupported_error("rank above 8");
  std::vector<int64_t> perm(rank);
  if (a.node.attrs.has("perm")) perm = a.node.attrs.get_ints("perm");
  else
    for (size_t i = 0; i < rank; ++i) perm[i] = static_cast<int64_t>(rank - 1 - i);
  if (rank == 4 && dtype_size(a.src_dtype(0)) == 4 && perm[0] == 0) {
    auto t = std::make_unique<BatchedTransposeState>();
    t->batch = in[0];
    if (perm == std::vector<int64_t>{0, 2, 3, 1}) {  // [N, C, H·W] → [N, H·W, C]
      t->rows = in[1];
      t->cols = in[2] * in[3];
      return std::unique_ptr<KernelState>(std::move(t));
    }
    if (perm == std::vector<int64_t>{0, 3, 1, 2}) {  // [N, H·W, C] → [N, C, H·W]
      t->rows = in[1] * in[2];
      t->cols = in[3];
      return std::unique_ptr<KernelState>(std::move(t));
    }
  }
  auto s = std::make_unique<StridedCopyState>();
  s->element_bytes = dtype_size(a.src_dtype(0));
  const std::vector<int64_t> strides = shape_strides(in);
  s->layout.rank = static_cast<int>(rank);
  for (size_t d = 0; d < rank; ++d) {
    s->layout.dims[d] = in[perm[d]];
    s->layout.strides[0][d] = strides[perm[d]];
  }
  return std::unique_ptr<KernelState>(std::move(s));
}

// ---- Pad ---------------------------------------------------------------------

class PadState final : public KernelState {
 public:
  StridedLayout layout;
  int64_t src_dims[kMaxDims] = {}, pad_begin[kMaxDims] = {};
  size_t element_bytes = 4;
  uint64_t value_bits = 0;        // a constant pad value's bytes (zero: 0 in every dtype)
  bool value_at_run_time = false;  // read input 2 on the device instead
  PadMode mode = PadMode::kConstant;
  Status run(const RunArgs& a) override {
    if (mode != PadMode::kConstant) {
      UCUDNN_CUDA_CHECK(launch_pad_by_mode(a.src[0].data, a.dst[0].data, element_bytes, a.dst[0].numel(), layout,
                                           src_dims, pad_begin, mode, a.ctx.stream()),
                        "");
      return Status::ok();
    }
    UCUDNN_CUDA_CHECK(launch_constant_pad(a.src[0].data, a.dst[0].data, element_bytes, a.dst[0].numel(), layout,
                                          src_dims, pad_begin, value_at_run_time ? a.src[2].data : nullptr,
                                          value_bits, a.ctx.stream()),
                      "");
    return Status::ok();
  }
};

StateOr prepare_pad(const PrepareArgs& a) {
  const std::string& mode = a.node.attrs.get_string("mode");
  if (mode != "constant" && mode != "reflect" && mode != "edge")
    return a.unsupported_error("mode '" + mode + "' (constant, reflect and edge are supported)");
  const Shape& in = a.src_shapes[0];
  if (in.size() > static_cast<size_t>(kMaxDims)) return a.unsupported_error("rank above 8");
  UCUDNN_ASSIGN_OR_RETURN(std::vector<int64_t> pads, constant_ints(a, 1, "pads"));
  UCUDNN_ASSIGN_OR_RETURN(std::vector<int64_t> axes, constant_ints(a, 3, "axes"));
  auto p = resolve_pads(in, pads, axes);
  if (!p) return invalid_argument(a.describe() + ": " + p.status().message());
  auto s = std::make_unique<PadState>();
  s->mode = mode == "reflect" ? PadMode::kReflect : (mode == "edge" ? PadMode::kEdge : PadMode::kConstant);
  s->element_bytes = dtype_size(a.src_dtype(0));
  if (s->element_bytes == 0 || s->element_bytes > sizeof(s->value_bits)) return a.unsupported_error("element size");
  // As the CPU kernel: a value of one element fills, anything else (absent, empty) fills with zeros.
  if (a.has_src(2) && shape_numel(a.src_shapes[2]) == 1) {
    if (a.src_dtype(2) != a.src_dtype(0))
      return invalid_argument(a.describe() + ": the pad value's dtype differs from the data's");
    if (const Tensor* v = a.constant(2)) std::memcpy(&s->value_bits, v->raw(), s->element_bytes);
    else s->value_at_run_time = true;
  }
  const std::vector<int64_t> strides = shape_strides(in);
  s->layout.rank = static_cast<int>(in.size());
  for (size_t d = 0; d < in.size(); ++d) {
    s->layout.dims[d] = p->out_shape[d];
    s->layout.strides[0][d] = strides[d];
    s->src_dims[d] = in[d];
    s->pad_begin[d] = p->begin[d];
  }
  return std::unique_ptr<KernelState>(std::move(s));
}

// ---- Gather ------------------------------------------------------------------

class GatherState final : public KernelState {
 public:
  int64_t outer = 1, axis_dim = 0, count = 0, inner = 1;
  size_t element_bytes = 4;
  bool indices32 = false;
  int64_t axis = 0;
  bool check_indices = false;  // indices computed at run time: Note [values checked on the host] (elementwise.cc)
  bool capturable() const override { return !check_indices; }  // it reads the indices to the host
  Status run(const RunArgs& a) override {
    if (check_indices) {
      UCUDNN_ASSIGN_OR_RETURN(std::vector<int64_t> values, read_ints_to_host(a.src[1], a.ctx));
      for (int64_t i : values)
        if (i < -axis_dim || i >= axis_dim)
          return invalid_argument("index " + std::to_string(i) + " (computed at run time) is out of range for axis " +
                                  std::to_string(axis) + " of size " + std::to_string(axis_dim));
    }
    UCUDNN_CUDA_CHECK(launch_gather(a.src[0].data, a.src[1].data, indices32, a.dst[0].data, element_bytes, outer,
                                    axis_dim, count, inner, a.ctx.stream()),
                      "");
    return Status::ok();
  }
};

StateOr prepare_gather(const PrepareArgs& a) {
  const Shape& data = a.src_shapes[0];
  const int64_t axis = normalize_axis(a.node.attrs.get_int("axis"), static_cast<int64_t>(data.size()));
  if (axis < 0) return invalid_argument(a.describe() + ": axis out of range");
  const DType index_type = a.src_dtype(1);
  if (index_type != DType::kInt64 && index_type != DType::kInt32) return a.unsupported_error("indices not int32/int64");
  const size_t elem = dtype_size(a.src_dtype(0));
  if (elem != 1 && elem != 4 && elem != 8) return a.unsupported_error("element size");
  auto s = std::make_unique<GatherState>();
  s->element_bytes = elem;
  s->indices32 = index_type == DType::kInt32;
  s->axis_dim = data[axis];
  s->count = shape_numel(a.src_shapes[1]);
  const AxisSplit around_axis = split_at_axis(data, axis);
  s->outer = around_axis.outer;
  s->inner = around_axis.inner;
  s->axis = axis;
  s->check_indices = a.constant(1) == nullptr;
  if (const Tensor* indices = a.constant(1)) {  // constant indices: check the range now
    UCUDNN_ASSIGN_OR_RETURN(std::vector<int64_t> values, indices->to_int64_vector());
    for (int64_t i : values)
      if (i < -s->axis_dim || i >= s->axis_dim)
        return invalid_argument(a.describe() + ": index " + std::to_string(i) + " is out of range for axis " +
                                std::to_string(axis) + " of size " + std::to_string(s->axis_dim));
  }
  return std::unique_ptr<KernelState>(std::move(s));
}

// ---- Cast --------------------------------------------------------------------

class CastState final : public KernelState {
 public:
  DType from = DType::kFloat32, to = DType::kFloat32;
  Status run(const RunArgs& a) override {
    UCUDNN_CUDA_CHECK(launch_cast(a.src[0].data, static_cast<int>(from), a.dst[0].data, static_cast<int>(to),
                                  a.dst[0].numel(), a.ctx.stream()),
                      "");
    return Status::ok();
  }
};

StateOr prepare_cast(const PrepareArgs& a) {
  auto s = std::make_unique<CastState>();
  s->from = a.src_dtype(0);
  s->to = a.graph.value(a.node.outputs[0]).dtype;
  if (s->from == DType::kUndefined || s->to == DType::kUndefined) return a.unsupported_error("cast dtypes");
  return std::unique_ptr<KernelState>(std::move(s));
}

}  // namespace

#define UCUDNN_SIMPLE_KERNEL(name, fn)              \
  const CudaKernel& cuda_kernel_##name() {          \
    static const CudaKernel k{.prepare = fn};       \
    return k;                                       \
  }
UCUDNN_SIMPLE_KERNEL(Flatten, prepare_copy)
UCUDNN_SIMPLE_KERNEL(Reshape, prepare_copy)
UCUDNN_SIMPLE_KERNEL(Squeeze, prepare_copy)
UCUDNN_SIMPLE_KERNEL(Unsqueeze, prepare_copy)
UCUDNN_SIMPLE_KERNEL(Identity, prepare_copy)
UCUDNN_SIMPLE_KERNEL(Dropout, prepare_copy)
UCUDNN_SIMPLE_KERNEL(Constant, prepare_constant)
UCUDNN_SIMPLE_KERNEL(Shape, prepare_shape)
UCUDNN_SIMPLE_KERNEL(Size, prepare_size)
UCUDNN_SIMPLE_KERNEL(Range, prepare_range)
UCUDNN_SIMPLE_KERNEL(EyeLike, prepare_eye_like)
UCUDNN_SIMPLE_KERNEL(Slice, prepare_slice)
UCUDNN_SIMPLE_KERNEL(Transpose, prepare_transpose)
UCUDNN_SIMPLE_KERNEL(Pad, prepare_pad)
UCUDNN_SIMPLE_KERNEL(Gather, prepare_gather)
UCUDNN_SIMPLE_KERNEL(Cast, prepare_cast)
UCUDNN_SIMPLE_KERNEL(Expand, prepare_expand)
#undef UCUDNN_SIMPLE_KERNEL

const CudaKernel& cuda_kernel_Concat() {
  static const CudaKernel k{.prepare = [](const PrepareArgs& a) { return prepare_rows(a, false); }};
  return k;
}

const CudaKernel& cuda_kernel_Split() {
  static const CudaKernel k{.prepare = [](const PrepareArgs& a) { return prepare_rows(a, true); }};
  return k;
}

}  // namespace ucudnn::cuda
