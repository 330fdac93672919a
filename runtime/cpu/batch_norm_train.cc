// CPU kernels of BatchNormTrain and BatchNormGrad (runtime/ops/batch_norm_train.cc for the formulas).
// X [N, C, inner...] is seen as N rows of `inner` values per channel; threads over channels. The
// per-channel sums run in double (vectorised with omp simd), so statistics over N·H·W = 256·112·112
// values keep float accuracy; the elementwise passes run in float. BatchNormTrain's mean and variance
// take two passes (mean, then Σ(x − mean)²), never E[x²] − mean². The running statistics may be bound
// to the same memory as new_running_*: each channel's old value is read before its new one is written.
#include <cmath>

#include "runtime/cpu/cpu_kernel.h"
#include "runtime/ir/layout.h"

namespace ucudnn::cpu {

namespace {

// X's layout per channel: `batch` rows of `inner` contiguous values, rows `channels · inner` apart.
struct ChannelRows {
  int64_t batch = 0, channels = 0, inner = 1;
  int64_t count() const { return batch * inner; }  // M, the values per channel
  int64_t row(int64_t n, int64_t c) const { return (n * channels + c) * inner; }
};

Expected<ChannelRows> channel_rows(const ir::Node& node, const Tensor& x) {
  if (ir::is_channels_last(node)) return channels_last_unsupported(node);
  if (x.rank() < 2) return invalid_argument(node.describe() + ": X " + x.describe() + " must have rank >= 2");
  ChannelRows r;
  r.batch = x.dim(0);
  r.channels = x.dim(1);
  r.inner = r.batch * r.channels == 0 ? 0 : x.numel() / (r.batch * r.channels);
  if (r.channels > 0 && r.count() < 2)
    return invalid_argument(node.describe() + ": X " + x.describe() + " has fewer than 2 values per channel");
  return r;
}

// Fails unless each tensor of `tensors` has `channels` elements.
Status check_channel_tensors(const ir::Node& node, int64_t channels, std::initializer_list<const Tensor*> tensors) {
  for (const Tensor* t : tensors)
    if (t->numel() != channels)
      return invalid_argument(node.describe() + ": a per-channel tensor is " + t->describe() + ", expected [" +
                              std::to_string(channels) + "]");
  return Status::ok();
}

// Σ f(i) over i < n in double.
template <typename F>
double sum_row(int64_t n, F f) {
  double sum = 0.0;
#pragma omp simd reduction(+ : sum)
  for (int64_t i = 0; i < n; ++i) sum += f(i);
  return sum;
}

Status run_batch_norm_train(const KernelArgs& args) {
  const Tensor& x = *args.src[0];
  UCUDNN_ASSIGN_OR_RETURN(ChannelRows r, channel_rows(args.node, x));
  for (size_t o = 0; o < 5; ++o)
    if (args.dst[o] == nullptr)
      return invalid_argument(args.node.describe() + ": output " + std::to_string(o) + " is not bound");
  if (args.dst[0]->shape() != x.shape())
    return invalid_argument(args.node.describe() + ": Y " + args.dst[0]->describe() + " differs from X " +
                            x.describe());
  UCUDNN_RETURN_IF_ERROR(check_channel_tensors(args.node, r.channels,
                                               {args.src[1], args.src[2], args.src[3], args.src[4], args.dst[1],
                                                args.dst[2], args.dst[3], args.dst[4]}));
  const double epsilon = args.node.attrs.get_float("epsilon");
  const double momentum = args.node.attrs.get_float("momentum");
  const float* src = x.data<float>();
  const float* scale = args.src[1]->data<float>();
  const float* bias = args.src[2]->data<float>();
  const float* running_mean = args.src[3]->data<float>();
  const float* running_var = args.src[4]->data<float>();
  float* dst = args.dst[0]->data<float>();
  float* new_running_mean = args.dst[1]->data<float>();
  float* new_running_var = args.dst[2]->data<float>();
  float* saved_mean = args.dst[3]->data<float>();
  float* saved_inv_std = args.dst[4]->data<float>();
  const double m = static_cast<double>(r.count());
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < r.channels; ++c) {
    double sum = 0.0;
    for (int64_t n = 0; n < r.batch; ++n) {
      const float* s = src + r.row(n, c);
      sum += sum_row(r.inner, [s](int64_t i) { return static_cast<double>(s[i]); });
    }
    const double mean = sum / m;
    double squares = 0.0;
    for (int64_t n = 0; n < r.batch; ++n) {
      const float* s = src + r.row(n, c);
      squares += sum_row(r.inner, [s, mean](int64_t i) {
        const double v = s[i] - mean;
        return v * v;
      });
    }
    const double var = squares / m;
    const double inv_std = 1.0 / std::sqrt(var + epsilon);
    const double old_mean = running_mean[c], old_var = running_var[c];  // read before new_running_* is written
    new_running_mean[c] = static_cast<float>(old_mean * momentum + mean * (1.0 - momentum));
    new_running_var[c] = static_cast<float>(old_var * momentum + var * m / (m - 1.0) * (1.0 - momentum));
    saved_mean[c] = static_cast<float>(mean);
    saved_inv_std[c] = static_cast<float>(inv_std);
    // x − mean as (x − mean_hi) − mean_lo: the first difference is exact for x near the mean, so a mean
    // far from zero loses nothing to its float rounding.
    const float mean_hi = static_cast<float>(mean), mean_lo = static_cast<float>(mean - mean_hi);
    const float a = static_cast<float>(scale[c] * inv_std), b = bias[c];
    for (int64_t n = 0; n < r.batch; ++n) {
      const float* s = src + r.row(n, c);
      float* d = dst + r.row(n, c);
#pragma omp simd
      for (int64_t i = 0; i < r.inner; ++i) d[i] = ((s[i] - mean_hi) - mean_lo) * a + b;
    }
  }
  return Status::ok();
}

Status run_batch_norm_grad(const KernelArgs& args) {
  const Tensor& dy = *args.src[0];
  const Tensor& x = *args.src[1];
  UCUDNN_ASSIGN_OR_RETURN(ChannelRows r, channel_rows(args.node, x));
  if (dy.shape() != x.shape() || args.dst[0]->shape() != x.shape())
    return invalid_argument(args.node.describe() + ": dY " + dy.describe() + " and dX " + args.dst[0]->describe() +
                            " must have X's shape " + x.describe());
  UCUDNN_RETURN_IF_ERROR(check_channel_tensors(args.node, r.channels,
                                               {args.src[2], args.src[3], args.src[4], args.dst[1], args.dst[2]}));
  const float* grad = dy.data<float>();
  const float* src = x.data<float>();
  const float* scale = args.src[2]->data<float>();
  const float* saved_mean = args.src[3]->data<float>();
  const float* saved_inv_std = args.src[4]->data<float>();
  float* dst = args.dst[0]->data<float>();
  float* dscale = args.dst[1]->data<float>();
  float* dbias = args.dst[2]->data<float>();
  const double m = static_cast<double>(r.count());
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < r.channels; ++c) {
    const double mean = saved_mean[c], inv_std = saved_inv_std[c];
    double sum_dy = 0.0, sum_dy_centered = 0.0;  // Σ dy, Σ dy · (x − mean)
    for (int64_t n = 0; n < r.batch; ++n) {
      const float* g = grad + r.row(n, c);
      const float* s = src + r.row(n, c);
      sum_dy += sum_row(r.inner, [g](int64_t i) { return static_cast<double>(g[i]); });
      sum_dy_centered += sum_row(r.inner, [g, s, mean](int64_t i) { return g[i] * (s[i] - mean); });
    }
    dbias[c] = static_cast<float>(sum_dy);
    dscale[c] = static_cast<float>(sum_dy_centered * inv_std);
    // dx = scale · inv_std · (dy − Σdy / M − (x − mean) · inv_std² · Σ dy (x − mean) / M)
    const float k = static_cast<float>(scale[c] * inv_std), mean_f = static_cast<float>(mean);
    const float mean_dy = static_cast<float>(sum_dy / m);
    const float slope = static_cast<float>(inv_std * inv_std * sum_dy_centered / m);
    for (int64_t n = 0; n < r.batch; ++n) {
      const float* g = grad + r.row(n, c);
      const float* s = src + r.row(n, c);
      float* d = dst + r.row(n, c);
#pragma omp simd
      for (int64_t i = 0; i < r.inner; ++i) d[i] = k * (g[i] - mean_dy - (s[i] - mean_f) * slope);
    }
  }
  return Status::ok();
}

}  // namespace

const CpuKernel& cpu_kernel_BatchNormTrain() {
  static const CpuKernel k{.run = run_batch_norm_train};
  return k;
}

const CpuKernel& cpu_kernel_BatchNormGrad() {
  static const CpuKernel k{.run = run_batch_norm_grad};
  return k;
}

}  // namespace ucudnn::cpu
