// CPU kernels of the elementwise unary ops: activations and math functions (see runtime/ops/activations.cc).
// Plain loops over contiguous float32 data, split across OpenMP threads, each element
// ir::eval_unary_node of the node's PointwiseOp (Note [one formula per op], runtime/ir/pointwise_program.h).
// PRelu broadcasts its slope by strides (0 on broadcast dims), with fast paths
// for a scalar slope and a per-channel slope of shape [C, 1, ..., 1].
#include <algorithm>
#include <limits>

#include "runtime/cpu/cpu_kernel.h"
#include "runtime/ir/fusion.h"
#include "runtime/ir/unary_ops.h"

namespace ucudnn::cpu {

namespace {

constexpr int64_t kParallelThreshold = 16384;

// Applies f to every element of src[0] into dst[0].
template <typename F>
Status map_elements(const KernelArgs& args, F f) {
  const float* src = args.src[0]->data<float>();
  float* dst = args.dst[0]->data<float>();
  const int64_t n = args.src[0]->numel();
#pragma omp parallel for schedule(static) if (n > kParallelThreshold)
  for (int64_t i = 0; i < n; ++i) dst[i] = f(src[i]);
  return Status::ok();
}

// A lone node computing `Op` (the opcode a template constant, so the switch folds away).
template <ir::PointwiseOp Op>
Status run_unary(const KernelArgs& args) {
  const ir::PointwiseParameters p = ir::pointwise_parameters(args.node.attrs, Op);
  return map_elements(args, [p](float x) { return ir::eval_unary_node(Op, x, p.p0, p.p1); });
}

Status run_prelu(const KernelArgs& args) {
  const Tensor& x = *args.src[0];
  const Tensor& slope = *args.src[1];
  const float* src = x.data<float>();
  const float* s = slope.data<float>();
  float* dst = args.dst[0]->data<float>();
  const int64_t n = x.numel();
  if (slope.numel() == 1) {
    const float a = s[0];
#pragma omp parallel for schedule(static) if (n > kParallelThreshold)
    for (int64_t i = 0; i < n; ++i) dst[i] = ir::eval_pointwise(ir::PointwiseOp::kPRelu, src[i], a, 0.f, 0.f);
    return Status::ok();
  }
  // Strides of the slope aligned to x's dims (right-aligned, 0 where broadcast).
  const int64_t rank = x.rank();
  const Shape& xs = x.shape();
  Shape slope_shape(static_cast<size_t>(rank), 1);
  std::copy(slope.shape().begin(), slope.shape().end(), slope_shape.end() - slope.rank());
  const std::vector<int64_t> dense = shape_strides(slope_shape);
  std::vector<int64_t> stride(static_cast<size_t>(rank));
  for (int64_t d = 0; d < rank; ++d) stride[d] = slope_shape[d] == 1 ? 0 : dense[d];
  const int64_t inner = rank == 0 ? 1 : xs[rank - 1];
  const int64_t rows = inner == 0 ? 0 : n / inner;
  const int64_t inner_stride = rank == 0 ? 0 : stride[rank - 1];
#pragma omp parallel for schedule(static) if (n > kParallelThreshold)
  for (int64_t row = 0; row < rows; ++row) {
    int64_t offset = 0, rest = row;
    for (int64_t d = rank - 2; d >= 0; --d) {
      offset += (rest % xs[d]) * stride[d];
      rest /= xs[d];
    }
    const float* xr = src + row * inner;
    float* yr = dst + row * inner;
    for (int64_t i = 0; i < inner; ++i) {
      const float a = s[offset + i * inner_stride];
      yr[i] = ir::eval_pointwise(ir::PointwiseOp::kPRelu, xr[i], a, 0.f, 0.f);
    }
  }
  return Status::ok();
}

Status run_clip(const KernelArgs& args) {
  float lo = -std::numeric_limits<float>::infinity();
  float hi = std::numeric_limits<float>::infinity();
  if (args.src.size() > 1 && args.src[1] != nullptr) lo = args.src[1]->data<float>()[0];
  if (args.src.size() > 2 && args.src[2] != nullptr) hi = args.src[2]->data<float>()[0];
  // ONNX: min > max sets every element to max; min(max(x, lo), hi) does exactly that.
  return map_elements(args, [lo, hi](float x) { return ir::eval_unary_node(ir::PointwiseOp::kClip, x, lo, hi); });
}

}  // namespace

Status channels_last_unsupported(const ir::Node& node) {
  return unsupported(node.describe() + ": the CPU backend runs channels-last (NHWC) data through Conv (with oneDNN) "
                     "and the pools only; plan this graph with --layout nchw");
}

Status apply_fused_activation(const ir::Node& node, Tensor& dst) {
  const std::string activation = ir::fused_activation(node);  // Note [fused nodes]
  if (activation.empty()) return Status::ok();
  if (activation != "Relu" || dst.dtype() != DType::kFloat32)
    return unsupported(node.describe() + ": fused activation '" + activation + "' on " + dst.describe() +
                       " has no CPU kernel");
  float* out = dst.data<float>();
  const int64_t n = dst.numel();
#pragma omp parallel for schedule(static) if (n > 65536)
  for (int64_t i = 0; i < n; ++i) out[i] = ir::eval_pointwise(ir::PointwiseOp::kRelu, out[i], 0.f, 0.f, 0.f);
  return Status::ok();
}

const CpuKernel& cpu_kernel_PRelu() {
  static const CpuKernel k{.run = run_prelu};
  return k;
}

const CpuKernel& cpu_kernel_Clip() {
  static const CpuKernel k{.run = run_clip};
  return k;
}

#define UCUDNN_UNARY_KERNEL(name)                                          \
  const CpuKernel& cpu_kernel_##name() {                                   \
    static const CpuKernel k{.run = run_unary<ir::PointwiseOp::k##name>}; \
    return k;                                                              \
  }
UCUDNN_FOR_EACH_UNARY_NODE_OP(UCUDNN_UNARY_KERNEL)
#undef UCUDNN_UNARY_KERNEL

}  // namespace ucudnn::cpu
