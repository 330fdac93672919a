// CPU kernels of SoftmaxGrad, LogSoftmaxGrad, SoftmaxCrossEntropyMean and
// SoftmaxCrossEntropyMeanGrad (formulas: runtime/ops/softmax_loss.cc).
//
// The softmax gradients view their tensors as [outer, n, inner] around `axis`
// and handle each of the outer·inner lines of length n with one sum (in double).
// The loss takes each row's max before the log-sum-exp so exp never overflows,
// and sums the rows' losses in double. Labels are checked before anything is
// written: one outside [0, C) is an InvalidArgument naming it and its row.
#include <algorithm>
#include <cmath>
#include <string>

#include "runtime/cpu/cpu_kernel.h"

namespace ucudnn::cpu {

namespace {

constexpr int64_t kParallelThreshold = 16384;

Status run_softmax_grad(const KernelArgs& args, bool log) {
  const Tensor& dy_tensor = *args.src[0];
  const Shape& shape = dy_tensor.shape();
  const int64_t raw_axis = args.node.attrs.get_int("axis");
  const int64_t axis = normalize_axis(raw_axis, static_cast<int64_t>(shape.size()));
  if (axis < 0)
    return invalid_argument(args.node.describe() + ": axis " + std::to_string(raw_axis) + " is out of range");
  const AxisSplit split = split_at_axis(shape, axis);
  const int64_t inner = split.inner, n = shape[axis], lines = split.outer * split.inner;
  const float* dy = dy_tensor.data<float>();
  const float* y = args.src[1]->data<float>();
  float* dx = args.dst[0]->data<float>();
#pragma omp parallel for schedule(static) if (lines * n > kParallelThreshold)
  for (int64_t line = 0; line < lines; ++line) {
    const int64_t base = (line / inner) * n * inner + line % inner;
    double sum = 0;  // Σ dY·Y (softmax) or Σ dY (log-softmax)
    for (int64_t i = 0; i < n; ++i) {
      const int64_t at = base + i * inner;
      sum += log ? dy[at] : static_cast<double>(dy[at]) * y[at];
    }
    const auto s = static_cast<float>(sum);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t at = base + i * inner;
      dx[at] = log ? dy[at] - std::exp(y[at]) * s : y[at] * (dy[at] - s);
    }
  }
  return Status::ok();
}

// Every label in [0, classes); else InvalidArgument naming the first one outside.
Status check_labels(const KernelArgs& args, const Tensor& labels, int64_t classes) {
  const int64_t* l = labels.data<int64_t>();
  for (int64_t i = 0; i < labels.numel(); ++i)
    if (l[i] < 0 || l[i] >= classes)
      return invalid_argument(args.node.describe() + ": label " + std::to_string(l[i]) + " at index " +
                              std::to_string(i) + " is outside [0, " + std::to_string(classes) + ")");
  return Status::ok();
}

Status run_loss(const KernelArgs& args) {
  const Tensor& scores = *args.src[0];
  const Tensor& labels = *args.src[1];
  const int64_t rows = scores.dim(0), classes = scores.dim(1);
  UCUDNN_RETURN_IF_ERROR(check_labels(args, labels, classes));
  const double smoothing = args.node.attrs.get_float("label_smoothing");
  const float* s = scores.data<float>();
  const int64_t* l = labels.data<int64_t>();
  float* log_prob = args.dst[1]->data<float>();
  double total = 0;
#pragma omp parallel for schedule(static) reduction(+ : total) if (rows * classes > kParallelThreshold)
  for (int64_t r = 0; r < rows; ++r) {
    const float* x = s + r * classes;
    float* lp = log_prob + r * classes;
    const float max = *std::max_element(x, x + classes);
    double sum = 0;
    for (int64_t c = 0; c < classes; ++c) sum += std::exp(static_cast<double>(x[c]) - max);
    const double log_sum = std::log(sum);
    double row_sum = 0;  // Σ_c log_prob
    for (int64_t c = 0; c < classes; ++c) {
      const double v = static_cast<double>(x[c]) - max - log_sum;
      lp[c] = static_cast<float>(v);
      row_sum += v;
    }
    const double picked = static_cast<double>(x[l[r]]) - max - log_sum;
    total += (1.0 - smoothing) * picked + (smoothing == 0 ? 0.0 : smoothing / static_cast<double>(classes) * row_sum);
  }
  args.dst[0]->data<float>()[0] = rows == 0 ? 0.0f : static_cast<float>(-total / static_cast<double>(rows));
  return Status::ok();
}

Status run_loss_grad(const KernelArgs& args) {
  const Tensor& log_prob = *args.src[1];
  const Tensor& labels = *args.src[2];
  const int64_t rows = log_prob.dim(0), classes = log_prob.dim(1);
  UCUDNN_RETURN_IF_ERROR(check_labels(args, labels, classes));
  const float smoothing = args.node.attrs.get_float("label_smoothing");
  const float scale = rows == 0 ? 0.0f : args.src[0]->data<float>()[0] / static_cast<float>(rows);
  const float uniform = smoothing / static_cast<float>(classes);
  const float* lp = log_prob.data<float>();
  const int64_t* l = labels.data<int64_t>();
  float* ds = args.dst[0]->data<float>();
#pragma omp parallel for schedule(static) if (rows * classes > kParallelThreshold)
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < classes; ++c) {
      const float q = (c == l[r] ? 1.0f - smoothing : 0.0f) + uniform;
      ds[r * classes + c] = scale * (std::exp(lp[r * classes + c]) - q);
    }
  return Status::ok();
}

}  // namespace

const CpuKernel& cpu_kernel_SoftmaxGrad() {
  static const CpuKernel k{.run = [](const KernelArgs& a) { return run_softmax_grad(a, false); }};
  return k;
}

const CpuKernel& cpu_kernel_LogSoftmaxGrad() {
  static const CpuKernel k{.run = [](const KernelArgs& a) { return run_softmax_grad(a, true); }};
  return k;
}

const CpuKernel& cpu_kernel_SoftmaxCrossEntropyMean() {
  static const CpuKernel k{.run = run_loss};
  return k;
}

const CpuKernel& cpu_kernel_SoftmaxCrossEntropyMeanGrad() {
  static const CpuKernel k{.run = run_loss_grad};
  return k;
}

}  // namespace ucudnn::cpu
