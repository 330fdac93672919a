// CUDA kernels of the elementwise ops: the activations (Relu, LeakyRelu,
// Sigmoid, Tanh, HardSigmoid, HardSwish, Clip, Elu, Erf, Softplus, Softsign, Celu, Selu, ThresholdedRelu,
// Shrink), the math functions (Sqrt, Exp, Log, Abs, Neg, Reciprocal, Floor, Ceil, Round, Sign and the
// trigonometric and hyperbolic ones), PRelu and the broadcasting Add/Sub/Mul/Div/Pow/Mod/Max/Min,
// the Reduce* family, ArgMax and ArgMin — float32, and int32/int64 for Add/Sub/Mul/Div/Mod/Max/Min as on
// the CPU; all our own kernels (kernels.cu, reduce_kernels.cu). prepare
// fixes the op parameters and the broadcast layout; run is one launch (integer
// Div with a divisor computed at run time first checks it on the host: Note
// [values checked on the host]). Clip's bounds are parameters when they are
// constants, else read on the device by the kernel.
#include <algorithm>
#include <limits>
#include <vector>

#include "runtime/cuda/cuda_check.h"
#include "runtime/ir/fusion.h"
#include "runtime/ir/unary_ops.h"
#include "runtime/cuda/cuda_kernel.h"
#include "runtime/cuda/elementwise.h"
#include "runtime/cuda/reduce_kernels.h"
#include "runtime/ops/reductions.h"

namespace ucudnn::cuda {

bool set_broadcast_layout(const Shape& out, const Shape& operand, int which, StridedLayout* layout) {
  if (out.size() > static_cast<size_t>(kMaxDims) || operand.size() > out.size()) return false;
  layout->rank = static_cast<int>(out.size());
  const std::vector<int64_t> dense = shape_strides(operand);
  const size_t shift = out.size() - operand.size();
  for (size_t d = 0; d < out.size(); ++d) {
    layout->dims[d] = out[d];
    if (d < shift) layout->strides[which][d] = 0;
    else layout->strides[which][d] = operand[d - shift] == 1 ? 0 : dense[d - shift];
  }
  return true;
}

// Note [values checked on the host]
// Some inputs are errors by their values, which only a run knows: an integer
// divisor of 0 (the CPU refuses it: runtime/cpu/binary.cc), a Gather index out
// of range. A kernel cannot return an error, and nothing reports a device-side
// flag after a run: synchronize() reports CUDA's own errors only, and a CUDA
// step other than a Conv gets no workspace to hold a flag (optimizer/planner.h).
// So these kernels copy the deciding input to the host and wait for it before
// launching: a host sync inside run(), against the kernel contract, taken only
// when such an input is computed at run time (a constant one is checked once, at
// prepare). Exported models feed them shape arithmetic: a few elements.
Expected<std::vector<int64_t>> read_ints_to_host(const DeviceTensor& src, CudaContext& ctx) {
  if (src.dtype != DType::kInt64 && src.dtype != DType::kInt32)
    return internal_error(std::string("read_ints_to_host: dtype ") + dtype_name(src.dtype) + ", not int32/int64");
  std::vector<int64_t> values(static_cast<size_t>(src.numel()));
  if (values.empty()) return values;
  if (src.dtype == DType::kInt64) {
    UCUDNN_CUDA_CHECK(cudaMemcpyAsync(values.data(), src.data, src.nbytes(), cudaMemcpyDeviceToHost, ctx.stream()),
                      "reading " + std::to_string(values.size()) + " int64 values to check them");
    UCUDNN_CUDA_CHECK(cudaStreamSynchronize(ctx.stream()), "reading int64 values to check them");
    return values;
  }
  std::vector<int32_t> narrow(values.size());
  UCUDNN_CUDA_CHECK(cudaMemcpyAsync(narrow.data(), src.data, src.nbytes(), cudaMemcpyDeviceToHost, ctx.stream()),
                    "reading " + std::to_string(values.size()) + " int32 values to check them");
  UCUDNN_CUDA_CHECK(cudaStreamSynchronize(ctx.stream()), "reading int32 values to check them");
  for (size_t i = 0; i < narrow.size(); ++i) values[i] = narrow[i];
  return values;
}

namespace {

class UnaryState final : public KernelState {
 public:
  ir::PointwiseOp op = ir::PointwiseOp::kRelu;
  float p0 = 0, p1 = 0;
  Status run(const RunArgs& a) override {
    UCUDNN_CUDA_CHECK(launch_unary(op, a.src[0].as<const float>(), a.dst[0].as<float>(), a.src[0].numel(), p0, p1,
                                   a.ctx.stream()),
                      "");
    return Status::ok();
  }
};

// Clip whose min or max is computed at run time: the bounds stay on the device.
class ClipTensorBoundsState final : public KernelState {
 public:
  bool has_low = false, has_high = false;
  Status run(const RunArgs& a) override {
    const float* low = has_low ? a.src[1].as<const float>() : nullptr;
    const float* high = has_high ? a.src[2].as<const float>() : nullptr;
    UCUDNN_CUDA_CHECK(launch_clip(a.src[0].as<const float>(), a.dst[0].as<float>(), a.src[0].numel(), low, high,
                                  a.ctx.stream()),
                      "");
    return Status::ok();
  }
};

Expected<std::unique_ptr<KernelState>> prepare_clip_tensor_bounds(const PrepareArgs& a) {
  auto s = std::make_unique<ClipTensorBoundsState>();
  s->has_low = a.has_src(1);
  s->has_high = a.has_src(2);
  for (size_t i = 1; i < 3; ++i)
    if (a.has_src(i) && (a.src_dtype(i) != DType::kFloat32 || shape_numel(a.src_shapes[i]) != 1))
      return invalid_argument(a.describe() + ": Clip's " + (i == 1 ? "min" : "max") +
                              " must be one float32 value, like X");
  return std::unique_ptr<KernelState>(std::move(s));
}

// A lone node computing `op` (Note [one formula per op], runtime/ir/pointwise_program.h), its
// parameters from its attributes (Clip: its constant bounds).
Expected<std::unique_ptr<KernelState>> prepare_unary(const PrepareArgs& a, ir::PointwiseOp op) {
  if (a.src_dtype(0) != DType::kFloat32) return a.unsupported_error("only float32");
  auto s = std::make_unique<UnaryState>();
  s->op = op;
  const ir::PointwiseParameters p = ir::pointwise_parameters(a.node.attrs, op);
  s->p0 = p.p0;
  s->p1 = p.p1;
  if (op == ir::PointwiseOp::kClip) {
    s->p0 = -std::numeric_limits<float>::infinity();
    s->p1 = std::numeric_limits<float>::infinity();
    for (size_t i = 1; i < 3; ++i)
      if (a.has_src(i) && a.constant(i) == nullptr) return prepare_clip_tensor_bounds(a);
    for (size_t i = 1; i < 3; ++i)
      if (a.has_src(i)) (i == 1 ? s->p0 : s->p1) = a.constant(i)->data<float>()[0];
  }
  return std::unique_ptr<KernelState>(std::move(s));
}

bool has_zero(const std::vector<int64_t>& values) {
  return std::find(values.begin(), values.end(), int64_t{0}) != values.end();
}

std::string division_by_zero(const std::string& divisor) {
  return "integer division by zero (divisor " + divisor + "); the CPU refuses it too";
}

class BinaryState final : public KernelState {
 public:
  BinaryOp op = BinaryOp::kAdd;
  DType dtype = DType::kFloat32;
  StridedLayout layout;
  bool contiguous = false;
  bool check_divisor = false;  // integer Div or Mod by a divisor computed at run time
  bool capturable() const override { return !check_divisor; }  // it reads the divisor to the host
  Status run(const RunArgs& a) override {
    if (dtype == DType::kFloat32) {
      UCUDNN_CUDA_CHECK(launch_binary(op, a.src[0].as<const float>(), a.src[1].as<const float>(),
                                      a.dst[0].as<float>(), a.dst[0].numel(), layout, contiguous, a.ctx.stream()),
                        "");
      return Status::ok();
    }
    if (check_divisor) {  // Note [values checked on the host]
      UCUDNN_ASSIGN_OR_RETURN(std::vector<int64_t> divisor, read_ints_to_host(a.src[1], a.ctx));
      if (has_zero(divisor))
        return invalid_argument(division_by_zero(std::string(dtype_name(dtype)) + shape_to_string(a.src[1].shape) +
                                                 " computed at run time"));
    }
    UCUDNN_CUDA_CHECK(launch_integer_binary(op, static_cast<int>(dtype), a.src[0].data, a.src[1].data, a.dst[0].data,
                                            a.dst[0].numel(), layout, contiguous, a.ctx.stream()),
                      "");
    return Status::ok();
  }
};

// Integer operands: the ops the CPU runs on them, and a divisor without zeros (now when it is a constant).
Status prepare_integer_binary(const PrepareArgs& a, BinaryState* s) {
  const bool divides = s->op == BinaryOp::kDiv || s->op == BinaryOp::kMod || s->op == BinaryOp::kFmod;
  const bool plain = s->op == BinaryOp::kAdd || s->op == BinaryOp::kSub || s->op == BinaryOp::kMul ||
                     s->op == BinaryOp::kMax || s->op == BinaryOp::kMin;
  if (!plain && !divides)
    return a.unsupported_error("only float32 operands");
  if (!ir::fused_activation(a.node).empty()) return a.unsupported_error("a fused activation on integers");
  if (!divides) return Status::ok();
  const Tensor* divisor = a.constant(1);
  if (divisor == nullptr) {
    s->check_divisor = true;
    return Status::ok();
  }
  UCUDNN_ASSIGN_OR_RETURN(std::vector<int64_t> values, divisor->to_int64_vector());
  if (has_zero(values))
    return invalid_argument(a.describe() + ": " + division_by_zero("the constant " + divisor->describe()));
  return Status::ok();
}

Expected<std::unique_ptr<KernelState>> prepare_binary(const PrepareArgs& a, BinaryOp op) {
  const DType dtype = a.src_dtype(0);
  if (a.src_dtype(1) != dtype || (dtype != DType::kFloat32 && dtype != DType::kInt64 && dtype != DType::kInt32))
    return a.unsupported_error("operands must both be float32, int32 or int64");
  auto s = std::make_unique<BinaryState>();
  s->op = op;
  s->dtype = dtype;
  if (dtype != DType::kFloat32) {
    UCUDNN_RETURN_IF_ERROR(prepare_integer_binary(a, s.get()));
  } else if (const std::string activation = ir::fused_activation(a.node); !activation.empty()) {  // Note [fused nodes]
    if (op != BinaryOp::kAdd || activation != "Relu")
      return a.unsupported_error("fused activation '" + activation + "'");
    s->op = BinaryOp::kAddRelu;
  }
  const Shape& out = a.dst_shapes[0];
  s->contiguous = a.src_shapes[0] == out && a.src_shapes[1] == out;
  if (!set_broadcast_layout(out, a.src_shapes[0], 0, &s->layout) ||
      !set_broadcast_layout(out, a.src_shapes[1], 1, &s->layout))
    return a.unsupported_error("rank above " + std::to_string(kMaxDims));
  return std::unique_ptr<KernelState>(std::move(s));
}

// The Reduce* family: one layout (the output's strides into the input, and the reduced axes), then
// launch_reduce (reduce_kernels.cu: a block per output for long reductions, split across several with
// partial sums in the workspace when there are few outputs, such as a convolution bias's gradient).
// Adjacent dims that are both reduced or both kept are merged first (the input is dense), so that the
// kernels walk a box of rank 1 or 2 (N and H·W for a per-channel sum) without divisions.
class ReduceState final : public KernelState {
 public:
  ReduceKind kind = ReduceKind::kSum;
  StridedLayout layout;
  int reduced_rank = 0;
  int64_t reduced_dims[kMaxDims] = {}, reduced_strides[kMaxDims] = {};
  int64_t outputs = 1, count = 1;
  bool copy = false;  // nothing reduced (noop_with_empty_axes)
  size_t workspace_bytes() const override { return copy ? 0 : reduce_workspace_bytes(kind, outputs, count); }
  Status run(const RunArgs& a) override {
    if (copy) {
      if (a.dst[0].data != a.src[0].data && a.dst[0].nbytes() > 0)
        UCUDNN_CUDA_CHECK(cudaMemcpyAsync(a.dst[0].data, a.src[0].data, a.dst[0].nbytes(), cudaMemcpyDeviceToDevice,
                                          a.ctx.stream()),
                          "");
      return Status::ok();
    }
    const float* src = a.src[0].as<const float>();
    float* dst = a.dst[0].as<float>();
    UCUDNN_CUDA_CHECK(launch_reduce(kind, src, dst, a.dst[0].numel(), layout, reduced_rank, reduced_dims,
                                    reduced_strides, a.workspace, a.ctx.stream()),
                      "");
    return Status::ok();
  }
};

Expected<std::unique_ptr<KernelState>> prepare_reduce(const PrepareArgs& a, ReduceKind kind) {
  const Shape& in = a.src_shapes[0];
  const int64_t rank = static_cast<int64_t>(in.size());
  if (rank > kMaxDims) return a.unsupported_error("rank above " + std::to_string(kMaxDims));
  std::vector<bool> reduce(in.size(), false);
  auto s = std::make_unique<ReduceState>();
  s->kind = kind;
  if (a.has_src(1)) {
    const Tensor* axes_tensor = a.constant(1);
    if (axes_tensor == nullptr) return a.unsupported_error("axes computed at run time");
    UCUDNN_ASSIGN_OR_RETURN(std::vector<int64_t> axes, axes_tensor->to_int64_vector());
    for (int64_t axis : axes) {
      const int64_t d = normalize_axis(axis, rank);
      if (d < 0) return invalid_argument(a.describe() + ": axis " + std::to_string(axis) + " is out of range");
      reduce[d] = true;
    }
    if (axes.empty() && a.node.attrs.get_int("noop_with_empty_axes") == 0) reduce.assign(in.size(), true);
    if (axes.empty() && a.node.attrs.get_int("noop_with_empty_axes") != 0) s->copy = true;
  } else if (a.node.attrs.get_int("noop_with_empty_axes") != 0) {
    s->copy = true;
  } else {
    reduce.assign(in.size(), true);
  }
  // Merged dims: runs of reduced or of kept dims (dims of size 1 dropped), outermost first.
  std::vector<int64_t> dims;
  std::vector<bool> reduced;
  for (int64_t d = 0; d < rank; ++d) {
    if (in[d] == 1) continue;
    if (!dims.empty() && reduced.back() == reduce[d]) dims.back() *= in[d];
    else {
      dims.push_back(in[d]);
      reduced.push_back(reduce[d]);
    }
  }
  const std::vector<int64_t> strides = shape_strides(dims);
  s->layout.rank = static_cast<int>(dims.size());
  for (size_t d = 0; d < dims.size(); ++d) {
    s->layout.dims[d] = reduced[d] ? 1 : dims[d];
    s->layout.strides[0][d] = strides[d];
    if (reduced[d]) {
      s->reduced_dims[s->reduced_rank] = dims[d];
      s->reduced_strides[s->reduced_rank] = strides[d];
      ++s->reduced_rank;
      s->count *= dims[d];
    } else {
      s->outputs *= dims[d];
    }
  }
  return std::unique_ptr<KernelState>(std::move(s));
}

// ArgMax/ArgMin: X viewed as [outer, n, inner] around the axis (the shape rule checked it), one thread a line.
class ArgExtremeState final : public KernelState {
 public:
  int64_t outer = 1, count = 1, inner = 1;
  bool max = true, last = false;
  Status run(const RunArgs& a) override {
    UCUDNN_CUDA_CHECK(launch_arg_extreme(a.src[0].as<const float>(), a.dst[0].as<int64_t>(), outer, count, inner, max,
                                         last, a.ctx.stream()),
                      "");
    return Status::ok();
  }
};

Expected<std::unique_ptr<KernelState>> prepare_arg_extreme(const PrepareArgs& a, bool max) {
  const Shape& in = a.src_shapes[0];
  const int64_t axis = normalize_axis(a.node.attrs.get_int("axis"), static_cast<int64_t>(in.size()));
  if (axis < 0) return invalid_argument(a.describe() + ": axis is out of range");
  auto s = std::make_unique<ArgExtremeState>();
  for (int64_t d = 0; d < static_cast<int64_t>(in.size()); ++d) {
    if (d < axis) s->outer *= in[d];
    if (d == axis) s->count = in[d];
    if (d > axis) s->inner *= in[d];
  }
  s->max = max;
  s->last = a.node.attrs.get_int("select_last_index") != 0;
  return std::unique_ptr<KernelState>(std::move(s));
}

}  // namespace

#define UCUDNN_UNARY_KERNEL(name)                                                      \
  const CudaKernel& cuda_kernel_##name() {                                             \
    static const CudaKernel k{.prepare = [](const PrepareArgs& a) {                    \
      return prepare_unary(a, ir::PointwiseOp::k##name);                               \
    }};                                                                                \
    return k;                                                                          \
  }
UCUDNN_FOR_EACH_UNARY_NODE_OP(UCUDNN_UNARY_KERNEL)
UCUDNN_UNARY_KERNEL(Clip)
#undef UCUDNN_UNARY_KERNEL

#define UCUDNN_BINARY_KERNEL(name)                                                                      \
  const CudaKernel& cuda_kernel_##name() {                                                              \
    static const CudaKernel k{.prepare = [](const PrepareArgs& a) { return prepare_binary(a, BinaryOp::k##name); }}; \
    return k;                                                                                           \
  }
UCUDNN_BINARY_KERNEL(Add)
UCUDNN_BINARY_KERNEL(Sub)
UCUDNN_BINARY_KERNEL(Mul)
UCUDNN_BINARY_KERNEL(Div)
UCUDNN_BINARY_KERNEL(Pow)
UCUDNN_BINARY_KERNEL(PRelu)
#undef UCUDNN_BINARY_KERNEL

// Max and Min of two operands: the importer lowers other counts into pairs (onnx_import/lowering/max_min.h).
Expected<std::unique_ptr<KernelState>> prepare_pair(const PrepareArgs& a, BinaryOp op) {
  if (a.node.inputs.size() != 2)
    return internal_error(a.describe() + ": " + std::to_string(a.node.inputs.size()) +
                          " operands; the importer lowers Max and Min into pairs");
  return prepare_binary(a, op);
}

const CudaKernel& cuda_kernel_Max() {
  static const CudaKernel k{.prepare = [](const PrepareArgs& a) { return prepare_pair(a, BinaryOp::kMax); }};
  return k;
}

const CudaKernel& cuda_kernel_Min() {
  static const CudaKernel k{.prepare = [](const PrepareArgs& a) { return prepare_pair(a, BinaryOp::kMin); }};
  return k;
}

const CudaKernel& cuda_kernel_Mod() {
  static const CudaKernel k{.prepare = [](const PrepareArgs& a) {
    return prepare_binary(a, a.node.attrs.get_int("fmod") != 0 ? BinaryOp::kFmod : BinaryOp::kMod);
  }};
  return k;
}

#define UCUDNN_REDUCTION_KERNEL(name, kind)                                               \
  const CudaKernel& cuda_kernel_##name() {                                                \
    static const CudaKernel k{.prepare = [](const PrepareArgs& a) {                       \
      return prepare_reduce(a, ReduceKind::kind);                                         \
    }};                                                                                   \
    return k;                                                                             \
  }
UCUDNN_FOR_EACH_REDUCTION(UCUDNN_REDUCTION_KERNEL)
#undef UCUDNN_REDUCTION_KERNEL

size_t reduce_step_workspace(const ir::Graph& graph, const ir::Node& node) {
  const std::optional<ReduceKind> kind = reduce_kind(node.op);
  if (!kind || node.inputs.empty()) return 0;
  // Split or not, outputs · parts <= kReduceSplitBlocks: the bound holds whatever the axes.
  const int64_t elements = shape_numel(graph.value(node.inputs[0]).shape);
  return reduce_workspace_bytes(*kind, 1, elements) > 0 ? kReduceWorkspaceBound : 0;
}

const CudaKernel& cuda_kernel_ArgMax() {
  static const CudaKernel k{.prepare = [](const PrepareArgs& a) { return prepare_arg_extreme(a, true); }};
  return k;
}

const CudaKernel& cuda_kernel_ArgMin() {
  static const CudaKernel k{.prepare = [](const PrepareArgs& a) { return prepare_arg_extreme(a, false); }};
  return k;
}

}  // namespace ucudnn::cuda
