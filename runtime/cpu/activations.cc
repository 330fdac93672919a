// CPU kernels of the elementwise unary ops: activations and math functions (see runtime/ops/activations.cc).
// Plain loops over contiguous float32 data, split across OpenMP threads.
// PRelu broadcasts its slope by strides (0 on broadcast dims), with fast paths
// for a scalar slope and a per-channel slope of shape [C, 1, ..., 1].
#include <algorithm>
#include <cmath>
#include <limits>

#include "runtime/cpu/cpu_kernel.h"
#include "runtime/ir/fusion.h"

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

// log(1 + exp(x)) without overflow: exp of a non-positive number.
float softplus(float x) { return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }

float sigmoid(float x) {
  // Stable on both tails: exp of a non-positive number never overflows.
  if (x >= 0) return 1.0f / (1.0f + std::exp(-x));
  const float e = std::exp(x);
  return e / (1.0f + e);
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
    for (int64_t i = 0; i < n; ++i) dst[i] = src[i] >= 0 ? src[i] : a * src[i];
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
      yr[i] = xr[i] >= 0 ? xr[i] : a * xr[i];
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
  return map_elements(args, [lo, hi](float x) { return std::min(std::max(x, lo), hi); });
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
  for (int64_t i = 0; i < n; ++i) out[i] = std::max(out[i], 0.0f);
  return Status::ok();
}

const CpuKernel& cpu_kernel_Relu() {
  static const CpuKernel k{.run = [](const KernelArgs& a) {
    return map_elements(a, [](float x) { return std::max(x, 0.0f); });
  }};
  return k;
}

const CpuKernel& cpu_kernel_LeakyRelu() {
  static const CpuKernel k{.run = [](const KernelArgs& a) {
    const float alpha = a.node.attrs.get_float("alpha");
    return map_elements(a, [alpha](float x) { return x >= 0 ? x : alpha * x; });
  }};
  return k;
}

const CpuKernel& cpu_kernel_PRelu() {
  static const CpuKernel k{.run = run_prelu};
  return k;
}

const CpuKernel& cpu_kernel_Sigmoid() {
  static const CpuKernel k{.run = [](const KernelArgs& a) { return map_elements(a, sigmoid); }};
  return k;
}

const CpuKernel& cpu_kernel_Tanh() {
  static const CpuKernel k{.run = [](const KernelArgs& a) {
    return map_elements(a, [](float x) { return std::tanh(x); });
  }};
  return k;
}

const CpuKernel& cpu_kernel_HardSigmoid() {
  static const CpuKernel k{.run = [](const KernelArgs& a) {
    const float alpha = a.node.attrs.get_float("alpha");
    const float beta = a.node.attrs.get_float("beta");
    return map_elements(a, [alpha, beta](float x) { return std::clamp(alpha * x + beta, 0.0f, 1.0f); });
  }};
  return k;
}

const CpuKernel& cpu_kernel_HardSwish() {
  static const CpuKernel k{.run = [](const KernelArgs& a) {
    return map_elements(a, [](float x) { return x * std::clamp(x / 6.0f + 0.5f, 0.0f, 1.0f); });
  }};
  return k;
}

const CpuKernel& cpu_kernel_Clip() {
  static const CpuKernel k{.run = run_clip};
  return k;
}

const CpuKernel& cpu_kernel_Erf() {
  static const CpuKernel k{.run = [](const KernelArgs& a) {
    return map_elements(a, [](float x) { return std::erf(x); });
  }};
  return k;
}

const CpuKernel& cpu_kernel_Elu() {
  static const CpuKernel k{.run = [](const KernelArgs& a) {
    const float alpha = a.node.attrs.get_float("alpha");
    return map_elements(a, [alpha](float x) { return x > 0 ? x : alpha * std::expm1(x); });
  }};
  return k;
}

const CpuKernel& cpu_kernel_Softplus() {
  static const CpuKernel k{.run = [](const KernelArgs& a) { return map_elements(a, softplus); }};
  return k;
}

const CpuKernel& cpu_kernel_Celu() {
  static const CpuKernel k{.run = [](const KernelArgs& a) {
    const float alpha = a.node.attrs.get_float("alpha");
    return map_elements(a, [alpha](float x) { return x > 0 ? x : alpha * std::expm1(x / alpha); });
  }};
  return k;
}

const CpuKernel& cpu_kernel_Selu() {
  static const CpuKernel k{.run = [](const KernelArgs& a) {
    const float alpha = a.node.attrs.get_float("alpha"), gamma = a.node.attrs.get_float("gamma");
    return map_elements(a, [alpha, gamma](float x) { return gamma * (x > 0 ? x : alpha * std::expm1(x)); });
  }};
  return k;
}

const CpuKernel& cpu_kernel_ThresholdedRelu() {
  static const CpuKernel k{.run = [](const KernelArgs& a) {
    const float alpha = a.node.attrs.get_float("alpha");
    return map_elements(a, [alpha](float x) { return x > alpha ? x : 0.0f; });
  }};
  return k;
}

const CpuKernel& cpu_kernel_Shrink() {
  static const CpuKernel k{.run = [](const KernelArgs& a) {
    const float bias = a.node.attrs.get_float("bias"), lambd = a.node.attrs.get_float("lambd");
    return map_elements(a, [bias, lambd](float x) { return x < -lambd ? x + bias : x > lambd ? x - bias : 0.0f; });
  }};
  return k;
}

namespace {
// -1, 0 or 1; NaN stays NaN.
float sign(float x) { return x > 0 ? 1.0f : x < 0 ? -1.0f : x == 0 ? 0.0f : x; }
}  // namespace

#define UCUDNN_MATH_KERNEL(name, expression)                                                      \
  const CpuKernel& cpu_kernel_##name() {                                                          \
    static const CpuKernel k{.run = [](const KernelArgs& a) {                                     \
      return map_elements(a, [](float x) { return expression; });                                  \
    }};                                                                                           \
    return k;                                                                                     \
  }
UCUDNN_MATH_KERNEL(Sqrt, std::sqrt(x))
UCUDNN_MATH_KERNEL(Exp, std::exp(x))
UCUDNN_MATH_KERNEL(Log, std::log(x))
UCUDNN_MATH_KERNEL(Abs, std::fabs(x))
UCUDNN_MATH_KERNEL(Neg, -x)
UCUDNN_MATH_KERNEL(Reciprocal, 1.0f / x)
UCUDNN_MATH_KERNEL(Softsign, x / (1.0f + std::fabs(x)))
UCUDNN_MATH_KERNEL(Floor, std::floor(x))
UCUDNN_MATH_KERNEL(Ceil, std::ceil(x))
UCUDNN_MATH_KERNEL(Round, std::nearbyint(x))  // halves to even (the default rounding mode)
UCUDNN_MATH_KERNEL(Sign, sign(x))
UCUDNN_MATH_KERNEL(Sin, std::sin(x))
UCUDNN_MATH_KERNEL(Cos, std::cos(x))
UCUDNN_MATH_KERNEL(Tan, std::tan(x))
UCUDNN_MATH_KERNEL(Asin, std::asin(x))
UCUDNN_MATH_KERNEL(Acos, std::acos(x))
UCUDNN_MATH_KERNEL(Atan, std::atan(x))
UCUDNN_MATH_KERNEL(Sinh, std::sinh(x))
UCUDNN_MATH_KERNEL(Cosh, std::cosh(x))
UCUDNN_MATH_KERNEL(Asinh, std::asinh(x))
UCUDNN_MATH_KERNEL(Acosh, std::acosh(x))
UCUDNN_MATH_KERNEL(Atanh, std::atanh(x))
#undef UCUDNN_MATH_KERNEL

}  // namespace ucudnn::cpu
