// CPU kernels of BatchNormTrain and BatchNormGrad (runtime/ops/batch_norm_train.cc for the formulas).
// X [N, C, inner...] is seen as N rows of `inner` values per channel; threads over channels. The
// per-channel sums run in double (vectorised with omp simd), so statistics over N·H·W = 256·112·112
// values keep float accuracy; the elementwise passes run in float. BatchNormTrain's mean and variance
// take two passes (mean, then Σ(x − mean)²), never E[x²] − mean². The running statistics may be bound
// to the same memory as new_running_*: each channel's old value is read before its new one is written.
// The fused forms (Note [batch norm with its activation], runtime/ops/batch_norm_train.cc) add the
// residual Z and apply the Relu in the pass that writes Y, and mask dY by the forward's Y in both of
// BatchNormGrad's passes, writing dZ beside dX; each form is its own instantiation of the loops, so the
// plain ones stay as they were.
#include <cmath>

#include "runtime/cpu/cpu_kernel.h"
#include "runtime/ir/fusion.h"
#include "runtime/ir/layout.h"
#include "runtime/ir/pointwise_program.h"
#include "runtime/ops/activation_grad.h"

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

// Whether `node` carries the fused Relu; InvalidArgument for another activation.
Expected<bool> fused_relu(const ir::Node& node) {
  const std::string activation = ir::fused_activation(node);
  if (!activation.empty() && activation != "Relu")
    return invalid_argument(node.describe() + ": activation '" + activation + "' is not \"\" or \"Relu\"");
  return activation == "Relu";
}

// Fails unless `t` is bound and has X's shape.
Status check_like_x(const ir::Node& node, const Tensor* t, const char* what, const Tensor& x) {
  if (t == nullptr) return invalid_argument(node.describe() + ": " + what + " is not bound");
  if (t->shape() != x.shape())
    return invalid_argument(node.describe() + ": " + what + " " + t->describe() + " must have X's shape " +
                            x.describe());
  return Status::ok();
}

// dY masked by the fused Relu: ActivationGrad's rule for Relu on the forward's output Y, the same
// function (Note [derivatives at kinks], runtime/ops/activation_grad.h).
inline float relu_masked(float dy, float y) {
  return dy * activation_derivative(ActivationKind::kRelu, y, 0.0f, 0.0f, 0.0f, 0.0f);
}

// Σ f(i) over i < n in double.
template <typename F>
double sum_row(int64_t n, F f) {
  double sum = 0.0;
#pragma omp simd reduction(+ : sum)
  for (int64_t i = 0; i < n; ++i) sum += f(i);
  return sum;
}

// One row of the fused forward: the normalised value rounded to float, + z (kResidual), then the Relu
// (eval_pointwise's, Note [one formula per op]) — what BatchNormTrain → Add → Relu wrote step by step.
template <bool kResidual, bool kRelu>
void apply_row(const float* s, const float* z, float* d, int64_t n, float mean_hi, float mean_lo, float a, float b) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    float v = ((s[i] - mean_hi) - mean_lo) * a + b;
    if constexpr (kResidual) v += z[i];
    if constexpr (kRelu) v = ir::eval_pointwise(ir::PointwiseOp::kRelu, v, 0.0f, 0.0f, 0.0f);
    d[i] = v;
  }
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
  UCUDNN_ASSIGN_OR_RETURN(const bool relu, fused_relu(args.node));
  const Tensor* z = args.src.size() > 5 ? args.src[5] : nullptr;  // the residual, when fused
  if (z != nullptr) UCUDNN_RETURN_IF_ERROR(check_like_x(args.node, z, "Z", x));
  const float* residual = z == nullptr ? nullptr : z->data<float>();
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
      const float* z = residual == nullptr ? nullptr : residual + r.row(n, c);
      float* d = dst + r.row(n, c);
      if (z == nullptr && !relu) {
#pragma omp simd
        for (int64_t i = 0; i < r.inner; ++i) d[i] = ((s[i] - mean_hi) - mean_lo) * a + b;
      } else if (z == nullptr) {
        apply_row<false, true>(s, z, d, r.inner, mean_hi, mean_lo, a, b);
      } else if (!relu) {
        apply_row<true, false>(s, z, d, r.inner, mean_hi, mean_lo, a, b);
      } else {
        apply_row<true, true>(s, z, d, r.inner, mean_hi, mean_lo, a, b);
      }
    }
  }
  return Status::ok();
}

// Channel c's sums Σ g and Σ g · (x − mean), g = dY (kRelu: masked by the forward's Y), both in one
// pass over each row (dY, Y and X read once).
template <bool kRelu>
void channel_sums(const ChannelRows& r, int64_t c, const float* grad, const float* fwd, const float* src, double mean,
                  double* sum_dy, double* sum_dy_centered) {
  *sum_dy = *sum_dy_centered = 0.0;
  for (int64_t n = 0; n < r.batch; ++n) {
    const float* g = grad + r.row(n, c);
    const float* y = kRelu ? fwd + r.row(n, c) : nullptr;
    const float* s = src + r.row(n, c);
    double first = 0.0, second = 0.0;
#pragma omp simd reduction(+ : first, second)
    for (int64_t i = 0; i < r.inner; ++i) {
      float d = g[i];
      if constexpr (kRelu) d = relu_masked(d, y[i]);
      first += static_cast<double>(d);
      second += d * (s[i] - mean);
    }
    *sum_dy += first;
    *sum_dy_centered += second;
  }
}

// Channel c's dX = k · (g − mean_dy − (x − mean) · slope), and dZ = g where `dresidual` is given.
template <bool kRelu>
void channel_apply(const ChannelRows& r, int64_t c, const float* grad, const float* fwd, const float* src,
                   float* dst, float* dresidual, float k, float mean, float mean_dy, float slope) {
  for (int64_t n = 0; n < r.batch; ++n) {
    const float* g = grad + r.row(n, c);
    const float* s = src + r.row(n, c);
    float* d = dst + r.row(n, c);
    if constexpr (!kRelu) {
#pragma omp simd
      for (int64_t i = 0; i < r.inner; ++i) d[i] = k * (g[i] - mean_dy - (s[i] - mean) * slope);
    } else {
      const float* y = fwd + r.row(n, c);
      float* dz = dresidual == nullptr ? nullptr : dresidual + r.row(n, c);
      if (dz == nullptr) {
#pragma omp simd
        for (int64_t i = 0; i < r.inner; ++i) d[i] = k * (relu_masked(g[i], y[i]) - mean_dy - (s[i] - mean) * slope);
      } else {
#pragma omp simd
        for (int64_t i = 0; i < r.inner; ++i) {
          const float masked = relu_masked(g[i], y[i]);
          d[i] = k * (masked - mean_dy - (s[i] - mean) * slope);
          dz[i] = masked;
        }
      }
    }
  }
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
  UCUDNN_ASSIGN_OR_RETURN(const bool relu, fused_relu(args.node));
  const Tensor* y = args.src.size() > 5 ? args.src[5] : nullptr;
  Tensor* dz = args.dst.size() > 3 ? args.dst[3] : nullptr;
  if (relu) UCUDNN_RETURN_IF_ERROR(check_like_x(args.node, y, "the forward's Y (input 5)", x));
  if (dz != nullptr) UCUDNN_RETURN_IF_ERROR(check_like_x(args.node, dz, "dZ", x));
  if (!relu && (y != nullptr || dz != nullptr))
    return invalid_argument(args.node.describe() + ": the forward's Y and dZ go with activation 'Relu' only");
  const float* grad = dy.data<float>();
  const float* src = x.data<float>();
  const float* fwd = relu ? y->data<float>() : nullptr;
  const float* scale = args.src[2]->data<float>();
  const float* saved_mean = args.src[3]->data<float>();
  const float* saved_inv_std = args.src[4]->data<float>();
  float* dst = args.dst[0]->data<float>();
  float* dresidual = dz == nullptr ? nullptr : dz->data<float>();
  float* dscale = args.dst[1]->data<float>();
  float* dbias = args.dst[2]->data<float>();
  const double m = static_cast<double>(r.count());
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < r.channels; ++c) {
    const double mean = saved_mean[c], inv_std = saved_inv_std[c];
    double sum_dy = 0.0, sum_dy_centered = 0.0;  // Σ dy, Σ dy · (x − mean)
    if (relu) channel_sums<true>(r, c, grad, fwd, src, mean, &sum_dy, &sum_dy_centered);
    else channel_sums<false>(r, c, grad, fwd, src, mean, &sum_dy, &sum_dy_centered);
    dbias[c] = static_cast<float>(sum_dy);
    dscale[c] = static_cast<float>(sum_dy_centered * inv_std);
    // dx = scale · inv_std · (dy − Σdy / M − (x − mean) · inv_std² · Σ dy (x − mean) / M)
    const float k = static_cast<float>(scale[c] * inv_std), mean_f = static_cast<float>(mean);
    const float mean_dy = static_cast<float>(sum_dy / m);
    const float slope = static_cast<float>(inv_std * inv_std * sum_dy_centered / m);
    if (relu) channel_apply<true>(r, c, grad, fwd, src, dst, dresidual, k, mean_f, mean_dy, slope);
    else channel_apply<false>(r, c, grad, fwd, src, dst, dresidual, k, mean_f, mean_dy, slope);
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
