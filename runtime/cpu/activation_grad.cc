// CPU kernels of the activation_grad family (runtime/ops/activation_grad.cc):
// plain loops over contiguous float32 data, split across OpenMP threads (ActivationGrad's
// instantiated per activation so it vectorises), with
// the derivatives and the dropout hash of runtime/ops/activation_grad.h (the
// CUDA kernels use the same functions). PReluGrad maps each element to its
// slope element by strides (0 on broadcast dims), as PRelu does, and sums
// dSlope in double: one partial sum per thread, added in thread order
// (deterministic for a given thread count).
#include "runtime/ops/activation_grad.h"

#include <omp.h>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "runtime/cpu/cpu_kernel.h"

namespace ucudnn::cpu {

namespace {

constexpr int64_t kParallelThreshold = 16384;

float bound_or(const KernelArgs& args, size_t i, float absent) {
  return args.src.size() > i && args.src[i] != nullptr ? args.src[i]->data<float>()[0] : absent;
}

// dX = dY · activation'(X), one instantiation per kind: with the kind a constant the derivative's
// switch folds away and the loop vectorises (a switch per element ran the MobileNetV2 step's Clip
// gradients about 14 times slower than the forward Clip).
struct Derivative {
  const float* dy;
  const float* x;
  float* dx;
  int64_t n;
  float alpha, beta, low, high;

  // The members copied to locals first: read through `this` inside the loop, GCC made gathers and scatters.
  template <ActivationKind kKind>
  void run() const {
    const float* g = dy;
    const float* v = x;
    float* d = dx;
    const float a = alpha, b = beta, lo = low, hi = high;
#pragma omp parallel for simd schedule(static) if (n > kParallelThreshold)
    for (int64_t i = 0; i < n; ++i) d[i] = g[i] * activation_derivative(kKind, v[i], a, b, lo, hi);
  }
};

Status run_activation_grad(const KernelArgs& args) {
  ActivationKind kind;
  const std::string& name = args.node.attrs.get_string("activation");
  if (!activation_kind_from_name(name, &kind))
    return invalid_argument(args.node.describe() + ": activation '" + name + "' is not one of " +
                            activation_kind_names());
  const float alpha = args.node.attrs.get_float("alpha");
  const float beta = args.node.attrs.get_float("beta");
  const float low = bound_or(args, 2, -std::numeric_limits<float>::infinity());
  const float high = bound_or(args, 3, std::numeric_limits<float>::infinity());
  const Derivative d{args.src[0]->data<float>(), args.src[1]->data<float>(), args.dst[0]->data<float>(),
                     args.src[1]->numel(), alpha, beta, low, high};
  switch (kind) {
    case ActivationKind::kRelu: d.run<ActivationKind::kRelu>(); break;
    case ActivationKind::kLeakyRelu: d.run<ActivationKind::kLeakyRelu>(); break;
    case ActivationKind::kSigmoid: d.run<ActivationKind::kSigmoid>(); break;
    case ActivationKind::kTanh: d.run<ActivationKind::kTanh>(); break;
    case ActivationKind::kHardSigmoid: d.run<ActivationKind::kHardSigmoid>(); break;
    case ActivationKind::kHardSwish: d.run<ActivationKind::kHardSwish>(); break;
    case ActivationKind::kClip: d.run<ActivationKind::kClip>(); break;
    case ActivationKind::kElu: d.run<ActivationKind::kElu>(); break;
    default:
      return internal_error(args.node.describe() + ": activation '" + name + "' has no CPU derivative");
  }
  return Status::ok();
}

// How X's elements map to the slope's: the slope right-aligned to X's rank, stride 0 on its
// broadcast dims; rows are X's last dim.
struct SlopeMap {
  Shape x;
  std::vector<int64_t> stride;
  int64_t inner = 1, inner_stride = 0;

  SlopeMap(const Shape& x_shape, const Shape& slope) : x(x_shape), stride(x_shape.size()) {
    const size_t rank = x.size();
    Shape aligned(rank, 1);
    std::copy(slope.begin(), slope.end(), aligned.end() - static_cast<std::ptrdiff_t>(slope.size()));
    const std::vector<int64_t> dense = shape_strides(aligned);
    for (size_t d = 0; d < rank; ++d) stride[d] = aligned[d] == 1 ? 0 : dense[d];
    inner = rank == 0 ? 1 : x[rank - 1];
    inner_stride = rank == 0 ? 0 : stride[rank - 1];
  }
  int64_t rows() const { return inner == 0 ? 0 : shape_numel(x) / inner; }
  // The slope element of the first element of `row`.
  int64_t row_offset(int64_t row) const {
    int64_t offset = 0;
    for (int64_t d = static_cast<int64_t>(x.size()) - 2; d >= 0; --d) {
      offset += (row % x[d]) * stride[d];
      row /= x[d];
    }
    return offset;
  }
};

// dX = x > 0 ? dY : slope · dY; dSlope[j] = Σ over the elements using slope j of (x > 0 ? 0 : x · dY).
Status run_prelu_grad(const KernelArgs& args) {
  const Tensor& x = *args.src[1];
  const Tensor& slope = *args.src[2];
  const float* dy = args.src[0]->data<float>();
  const float* xs = x.data<float>();
  const float* s = slope.data<float>();
  float* dx = args.dst[0]->data<float>();
  float* dslope = args.dst[1]->data<float>();
  const SlopeMap map(x.shape(), slope.shape());
  const int64_t rows = map.rows();
  const auto slope_n = static_cast<size_t>(slope.numel());
  const int threads = x.numel() > kParallelThreshold ? num_threads() : 1;
  std::vector<double> partial(static_cast<size_t>(threads) * slope_n, 0.0);  // a slope per thread: small
#pragma omp parallel num_threads(threads)
  {
    double* sum = partial.data() + static_cast<size_t>(omp_get_thread_num()) * slope_n;
#pragma omp for schedule(static)
    for (int64_t row = 0; row < rows; ++row) {
      const int64_t base = row * map.inner, offset = map.row_offset(row);
      for (int64_t i = 0; i < map.inner; ++i) {
        const int64_t j = offset + i * map.inner_stride;
        const float v = xs[base + i], g = dy[base + i];
        dx[base + i] = v > 0.0f ? g : s[j] * g;
        if (v <= 0.0f) sum[j] += static_cast<double>(v) * g;
      }
    }
  }
  for (size_t j = 0; j < slope_n; ++j) {
    double total = 0;
    for (int t = 0; t < threads; ++t) total += partial[static_cast<size_t>(t) * slope_n + j];
    dslope[j] = static_cast<float>(total);
  }
  return Status::ok();
}

Status run_dropout_train(const KernelArgs& args) {
  const float ratio = args.node.attrs.get_float("ratio");
  const float scale = dropout_scale(ratio);
  const int64_t seed = args.src[1]->data<int64_t>()[0];
  const float* x = args.src[0]->data<float>();
  float* y = args.dst[0]->data<float>();
  float* mask = args.dst[1]->data<float>();
  const int64_t n = args.src[0]->numel();
#pragma omp parallel for schedule(static) if (n > kParallelThreshold)
  for (int64_t i = 0; i < n; ++i) {
    mask[i] = dropout_mask(seed, i, ratio, scale);
    y[i] = x[i] * mask[i];
  }
  return Status::ok();
}

}  // namespace

const CpuKernel& cpu_kernel_ActivationGrad() {
  static const CpuKernel k{.run = run_activation_grad};
  return k;
}

const CpuKernel& cpu_kernel_PReluGrad() {
  static const CpuKernel k{.run = run_prelu_grad};
  return k;
}

const CpuKernel& cpu_kernel_DropoutTrain() {
  static const CpuKernel k{.run = run_dropout_train};
  return k;
}

}  // namespace ucudnn::cpu
