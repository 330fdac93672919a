// CPU kernels of BatchNormalization (inference) and LRN. Plain loops, threads
// over (n, c) planes.
//   BN:  y = (x - mean) · scale / sqrt(var + epsilon) + B, folded per channel
//        into y = a · x + b.
//   LRN: y = x / (bias + alpha / size · Σ x²)^beta, the sum over channels
//        [c - floor((size-1)/2), c + ceil((size-1)/2)] clipped to [0, C).
#include <algorithm>
#include <cmath>
#include <vector>

#include "runtime/cpu/cpu_kernel.h"

namespace ucudnn::cpu {

namespace {

// Elements below which waking the threads costs more than it saves.
constexpr int64_t kParallelThreshold = 16384;

Status check_same_shape(const KernelArgs& args) {
  const Tensor& x = *args.src[0];
  if (x.rank() < 2) return invalid_argument(args.node.describe() + ": X " + x.describe() + " must have rank >= 2");
  if (args.dst[0]->shape() != x.shape())
    return invalid_argument(args.node.describe() + ": Y is " + args.dst[0]->describe() + " but X is " + x.describe());
  return Status::ok();
}

Status run_batch_norm(const KernelArgs& args) {
  UCUDNN_RETURN_IF_ERROR(check_same_shape(args));
  const Tensor& x = *args.src[0];
  const int64_t batch = x.dim(0), channels = x.dim(1);
  for (size_t i = 1; i < 5; ++i)
    if (args.src.size() <= i || args.src[i] == nullptr || args.src[i]->numel() != channels)
      return invalid_argument(args.node.describe() + ": input " + std::to_string(i) + " must hold " +
                              std::to_string(channels) + " values");
  const float epsilon = args.node.attrs.has("epsilon") ? args.node.attrs.get_float("epsilon") : 1e-5f;
  const float* scale = args.src[1]->data<float>();
  const float* shift = args.src[2]->data<float>();
  const float* mean = args.src[3]->data<float>();
  const float* var = args.src[4]->data<float>();
  std::vector<float> a(static_cast<size_t>(channels)), b(static_cast<size_t>(channels));
  for (int64_t c = 0; c < channels; ++c) {
    a[c] = scale[c] / std::sqrt(var[c] + epsilon);
    b[c] = shift[c] - mean[c] * a[c];
  }
  const int64_t planes = batch * channels;
  const int64_t size = planes == 0 ? 0 : x.numel() / planes;
  const float* src = x.data<float>();
  float* dst = args.dst[0]->data<float>();
#pragma omp parallel for schedule(static) if (x.numel() > kParallelThreshold)
  for (int64_t i = 0; i < planes; ++i) {
    const float ai = a[i % channels], bi = b[i % channels];
    const float* s = src + i * size;
    float* d = dst + i * size;
    for (int64_t j = 0; j < size; ++j) d[j] = ai * s[j] + bi;
  }
  return Status::ok();
}

Status run_lrn(const KernelArgs& args) {
  UCUDNN_RETURN_IF_ERROR(check_same_shape(args));
  const Tensor& x = *args.src[0];
  const ir::Attributes& attrs = args.node.attrs;
  const int64_t size = attrs.get_int("size");
  if (size < 1) return invalid_argument(args.node.describe() + ": size must be >= 1");
  const float alpha = attrs.has("alpha") ? attrs.get_float("alpha") : 1e-4f;
  const float beta = attrs.has("beta") ? attrs.get_float("beta") : 0.75f;
  const float bias = attrs.has("bias") ? attrs.get_float("bias") : 1.0f;
  const int64_t batch = x.dim(0), channels = x.dim(1);
  const int64_t planes = batch * channels;
  const int64_t spatial = planes == 0 ? 0 : x.numel() / planes;
  const int64_t before = (size - 1) / 2, after = size - 1 - before;
  const float* src = x.data<float>();
  float* dst = args.dst[0]->data<float>();
  const float coefficient = alpha / static_cast<float>(size);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < planes; ++i) {
    const int64_t n = i / channels, c = i % channels;
    const int64_t first = std::max<int64_t>(0, c - before), last = std::min(channels - 1, c + after);
    const float* s = src + i * spatial;
    float* d = dst + i * spatial;
    for (int64_t j = 0; j < spatial; ++j) {
      float sum = 0.0f;
      for (int64_t k = first; k <= last; ++k) {
        const float v = src[(n * channels + k) * spatial + j];
        sum += v * v;
      }
      d[j] = s[j] / std::pow(bias + coefficient * sum, beta);
    }
  }
  return Status::ok();
}

}  // namespace

const CpuKernel& cpu_kernel_BatchNormalization() {
  static const CpuKernel k{.run = run_batch_norm};
  return k;
}

const CpuKernel& cpu_kernel_LRN() {
  static const CpuKernel k{.run = run_lrn};
  return k;
}

}  // namespace ucudnn::cpu
