// CUDA kernels of the elementwise ops: the activations (Relu, LeakyRelu,
// Sigmoid, Tanh, HardSigmoid, HardSwish, Clip, Elu), PRelu and the
// broadcasting Add/Sub/Mul/Div, and ReduceMean — all float32, all our own
// kernels (kernels.cu). prepare fixes the op parameters and the broadcast
// layout; run is one launch.
#include <limits>

#include "runtime/cuda/cuda_check.h"
#include "runtime/ir/fusion.h"
#include "runtime/cuda/cuda_kernel.h"
#include "runtime/cuda/elementwise.h"

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

namespace {

class UnaryState final : public KernelState {
 public:
  UnaryOp op = UnaryOp::kRelu;
  float alpha = 0, beta = 0;
  Status run(const RunArgs& a) override {
    UCUDNN_CUDA_CHECK(launch_unary(op, a.src[0].as<const float>(), a.dst[0].as<float>(), a.src[0].numel(), alpha,
                                   beta, a.ctx.stream()),
                      "");
    return Status::ok();
  }
};

Expected<std::unique_ptr<KernelState>> prepare_unary(const PrepareArgs& a, UnaryOp op) {
  if (a.src_dtype(0) != DType::kFloat32) return a.unsupported_error("only float32");
  auto s = std::make_unique<UnaryState>();
  s->op = op;
  const ir::Attributes& attrs = a.node.attrs;
  switch (op) {
    case UnaryOp::kLeakyRelu:
    case UnaryOp::kElu: s->alpha = attrs.get_float("alpha"); break;
    case UnaryOp::kHardSigmoid:
      s->alpha = attrs.get_float("alpha");
      s->beta = attrs.get_float("beta");
      break;
    case UnaryOp::kClip: {
      s->alpha = -std::numeric_limits<float>::infinity();
      s->beta = std::numeric_limits<float>::infinity();
      for (size_t i = 1; i < 3; ++i) {
        if (!a.has_src(i)) continue;
        const Tensor* bound = a.constant(i);
        if (bound == nullptr) return a.unsupported_error("Clip bounds computed at run time (only constants)");
        (i == 1 ? s->alpha : s->beta) = bound->data<float>()[0];
      }
      break;
    }
    default: break;
  }
  return std::unique_ptr<KernelState>(std::move(s));
}

class BinaryState final : public KernelState {
 public:
  BinaryOp op = BinaryOp::kAdd;
  StridedLayout layout;
  bool contiguous = false;
  Status run(const RunArgs& a) override {
    UCUDNN_CUDA_CHECK(launch_binary(op, a.src[0].as<const float>(), a.src[1].as<const float>(), a.dst[0].as<float>(),
                                    a.dst[0].numel(), layout, contiguous, a.ctx.stream()),
                      "");
    return Status::ok();
  }
};

Expected<std::unique_ptr<KernelState>> prepare_binary(const PrepareArgs& a, BinaryOp op) {
  if (a.src_dtype(0) != DType::kFloat32 || a.src_dtype(1) != DType::kFloat32)
    return a.unsupported_error("only float32 operands");
  auto s = std::make_unique<BinaryState>();
  s->op = op;
  if (const std::string activation = ir::fused_activation(a.node); !activation.empty()) {  // Note [fused nodes]
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

class ReduceMeanState final : public KernelState {
 public:
  StridedLayout layout;
  int reduced_rank = 0;
  int64_t reduced_dims[kMaxDims] = {}, reduced_strides[kMaxDims] = {};
  bool copy = false;  // nothing reduced (noop_with_empty_axes)
  Status run(const RunArgs& a) override {
    if (copy) {
      UCUDNN_CUDA_CHECK(cudaMemcpyAsync(a.dst[0].data, a.src[0].data, a.dst[0].nbytes(), cudaMemcpyDeviceToDevice,
                                        a.ctx.stream()),
                        "");
      return Status::ok();
    }
    UCUDNN_CUDA_CHECK(launch_reduce_mean(a.src[0].as<const float>(), a.dst[0].as<float>(), a.dst[0].numel(), layout,
                                         reduced_rank, reduced_dims, reduced_strides, a.ctx.stream()),
                      "");
    return Status::ok();
  }
};

Expected<std::unique_ptr<KernelState>> prepare_reduce_mean(const PrepareArgs& a) {
  const Shape& in = a.src_shapes[0];
  const int64_t rank = static_cast<int64_t>(in.size());
  if (rank > kMaxDims) return a.unsupported_error("rank above " + std::to_string(kMaxDims));
  std::vector<bool> reduce(in.size(), false);
  auto s = std::make_unique<ReduceMeanState>();
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
  const std::vector<int64_t> strides = shape_strides(in);
  s->layout.rank = static_cast<int>(rank);
  for (int64_t d = 0; d < rank; ++d) {
    s->layout.dims[d] = reduce[d] ? 1 : in[d];
    s->layout.strides[0][d] = strides[d];
    if (reduce[d]) {
      s->reduced_dims[s->reduced_rank] = in[d];
      s->reduced_strides[s->reduced_rank] = strides[d];
      ++s->reduced_rank;
    }
  }
  return std::unique_ptr<KernelState>(std::move(s));
}

}  // namespace

#define UCUDNN_UNARY_KERNEL(name)                                                                     \
  const CudaKernel& cuda_kernel_##name() {                                                            \
    static const CudaKernel k{.prepare = [](const PrepareArgs& a) { return prepare_unary(a, UnaryOp::k##name); }}; \
    return k;                                                                                         \
  }
UCUDNN_UNARY_KERNEL(Relu)
UCUDNN_UNARY_KERNEL(LeakyRelu)
UCUDNN_UNARY_KERNEL(Sigmoid)
UCUDNN_UNARY_KERNEL(Tanh)
UCUDNN_UNARY_KERNEL(HardSigmoid)
UCUDNN_UNARY_KERNEL(HardSwish)
UCUDNN_UNARY_KERNEL(Clip)
UCUDNN_UNARY_KERNEL(Elu)
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
UCUDNN_BINARY_KERNEL(PRelu)
#undef UCUDNN_BINARY_KERNEL

const CudaKernel& cuda_kernel_ReduceMean() {
  static const CudaKernel k{.prepare = prepare_reduce_mean};
  return k;
}

}  // namespace ucudnn::cuda
