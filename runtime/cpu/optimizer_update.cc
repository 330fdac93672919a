// CPU kernels of SgdUpdate and AdamWUpdate (runtime/ops/optimizer_update.cc): one pass over the
// elements, threads over index ranges. Each element is read before it is written, so every output
// may share memory with its input (the trainer updates parameters and state in place).
// The per-step scalars (bias corrections, step sizes) are computed in double from lr and step, as
// PyTorch computes them in Python floats; the per-element arithmetic is float32 in PyTorch's order:
//   SGD:   g = grad + wd·p; buf = step == 1 ? g : momentum·buf + (1 − dampening)·g;
//          g = nesterov ? g + momentum·buf : buf (with momentum ≠ 0); p = p − lr·g.
//   AdamW: p = p·(1 − lr·wd); m = β1·m + (1 − β1)·g; v = β2·v + (1 − β2)·g²;
//          p = p − lr/(1 − β1^t) · m / (sqrt(v) / sqrt(1 − β2^t) + ε).
#include <cmath>
#include <string>

#include "runtime/cpu/cpu_kernel.h"

namespace ucudnn::cpu {

namespace {

// Checks that the state inputs and every output hold param's element count, and reads lr and step
// (the two inputs after the state); step counts updates from 1.
Status read_step_inputs(const KernelArgs& args, size_t state_count, float* lr, int64_t* step) {
  const int64_t n = args.src[0]->numel();
  for (size_t i = 0; i < state_count; ++i)
    if (args.src[i]->numel() != n)
      return invalid_argument(args.node.describe() + ": input " + std::to_string(i) + " " + args.src[i]->describe() +
                              " does not match param " + args.src[0]->describe());
  for (const Tensor* dst : args.dst)
    if (dst->numel() != n)
      return invalid_argument(args.node.describe() + ": output " + dst->describe() + " does not match param " +
                              args.src[0]->describe());
  *lr = args.src[state_count]->data<float>()[0];
  *step = args.src[state_count + 1]->data<int64_t>()[0];
  if (*step < 1)
    return invalid_argument(args.node.describe() + ": step " + std::to_string(*step) +
                            " must be >= 1 (the first update is step 1)");
  return Status::ok();
}

Status run_sgd(const KernelArgs& args) {
  float lr = 0;
  int64_t step = 0;
  UCUDNN_RETURN_IF_ERROR(read_step_inputs(args, 3, &lr, &step));
  const ir::Attributes& attrs = args.node.attrs;
  const float momentum = attrs.get_float("momentum"), dampening = attrs.get_float("dampening");
  const float weight_decay = attrs.get_float("weight_decay");
  const bool nesterov = attrs.get_int("nesterov") != 0, first = step == 1;
  const float* param = args.src[0]->data<float>();
  const float* grad = args.src[1]->data<float>();
  const float* buffer = args.src[2]->data<float>();
  float* param_out = args.dst[0]->data<float>();
  float* buffer_out = args.dst[1]->data<float>();
  const int64_t n = args.src[0]->numel();
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    const float p = param[i];
    float g = grad[i], b = buffer[i];
    if (weight_decay != 0.0f) g += weight_decay * p;
    if (momentum != 0.0f) {
      b = first ? g : b * momentum + (1.0f - dampening) * g;
      g = nesterov ? g + momentum * b : b;
    }
    buffer_out[i] = b;
    param_out[i] = p - lr * g;
  }
  return Status::ok();
}

Status run_adamw(const KernelArgs& args) {
  float lr = 0;
  int64_t step = 0;
  UCUDNN_RETURN_IF_ERROR(read_step_inputs(args, 4, &lr, &step));
  const ir::Attributes& attrs = args.node.attrs;
  const float beta1 = attrs.get_float("beta1"), beta2 = attrs.get_float("beta2");
  const float epsilon = attrs.get_float("epsilon");
  const auto t = static_cast<double>(step);
  const auto decay = static_cast<float>(1.0 - double{lr} * attrs.get_float("weight_decay"));
  const auto step_size = static_cast<float>(lr / (1.0 - std::pow(double{beta1}, t)));
  const auto correction2_sqrt = static_cast<float>(std::sqrt(1.0 - std::pow(double{beta2}, t)));
  const float* param = args.src[0]->data<float>();
  const float* grad = args.src[1]->data<float>();
  const float* m_in = args.src[2]->data<float>();
  const float* v_in = args.src[3]->data<float>();
  float* param_out = args.dst[0]->data<float>();
  float* m_out = args.dst[1]->data<float>();
  float* v_out = args.dst[2]->data<float>();
  const int64_t n = args.src[0]->numel();
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    const float g = grad[i];
    const float m = m_in[i] * beta1 + (1.0f - beta1) * g;
    const float v = v_in[i] * beta2 + (1.0f - beta2) * (g * g);
    const float denom = std::sqrt(v) / correction2_sqrt + epsilon;
    m_out[i] = m;
    v_out[i] = v;
    param_out[i] = param[i] * decay - step_size * (m / denom);
  }
  return Status::ok();
}

}  // namespace

const CpuKernel& cpu_kernel_SgdUpdate() {
  static const CpuKernel k{.run = run_sgd};
  return k;
}

const CpuKernel& cpu_kernel_AdamWUpdate() {
  static const CpuKernel k{.run = run_adamw};
  return k;
}

}  // namespace ucudnn::cpu
