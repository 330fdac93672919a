// The optimizer-update kernels (see optimizer_update_kernels.h): one grid-stride pass over the
// elements, the arithmetic of the CPU kernels (runtime/cpu/optimizer_update.cc) in the same order.
#include <cstdint>

#include "runtime/cuda/grid_loop.cuh"
#include "runtime/cuda/optimizer_update_kernels.h"

namespace ucudnn::cuda {

namespace {

__global__ void sgd_update_kernel(const float* param, const float* grad, const float* buffer, const float* lr,
                                  const int64_t* step, float* param_out, float* buffer_out, int64_t n,
                                  SgdHyper hyper) {
  const float rate = *lr;
  const bool first = *step == 1;
  UCUDNN_GRID_LOOP(i, n) {
    const float p = param[i];
    float g = grad[i], b = buffer[i];
    if (hyper.weight_decay != 0.0f) g += hyper.weight_decay * p;
    if (hyper.momentum != 0.0f) {
      b = first ? g : b * hyper.momentum + (1.0f - hyper.dampening) * g;
      g = hyper.nesterov ? g + hyper.momentum * b : b;
    }
    buffer_out[i] = b;
    param_out[i] = p - rate * g;
  }
}

__global__ void adamw_update_kernel(const float* param, const float* grad, const float* m_in, const float* v_in,
                                    const float* lr, const int64_t* step, float* param_out, float* m_out,
                                    float* v_out, int64_t n, AdamWHyper hyper) {
  const double rate = *lr, t = static_cast<double>(*step);
  const auto decay = static_cast<float>(1.0 - rate * hyper.weight_decay);
  const auto step_size = static_cast<float>(rate / (1.0 - pow(static_cast<double>(hyper.beta1), t)));
  const auto correction2_sqrt = static_cast<float>(sqrt(1.0 - pow(static_cast<double>(hyper.beta2), t)));
  UCUDNN_GRID_LOOP(i, n) {
    const float g = grad[i];
    const float m = m_in[i] * hyper.beta1 + (1.0f - hyper.beta1) * g;
    const float v = v_in[i] * hyper.beta2 + (1.0f - hyper.beta2) * (g * g);
    const float denom = sqrtf(v) / correction2_sqrt + hyper.epsilon;
    m_out[i] = m;
    v_out[i] = v;
    param_out[i] = param[i] * decay - step_size * (m / denom);
  }
}

}  // namespace

cudaError_t launch_sgd_update(const float* param, const float* grad, const float* buffer, const float* lr,
                              const int64_t* step, float* param_out, float* buffer_out, int64_t n,
                              const SgdHyper& hyper, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  sgd_update_kernel<<<blocks_for(n), kThreads, 0, stream>>>(param, grad, buffer, lr, step, param_out, buffer_out, n,
                                                            hyper);
  return cudaGetLastError();
}

cudaError_t launch_adamw_update(const float* param, const float* grad, const float* m, const float* v,
                                const float* lr, const int64_t* step, float* param_out, float* m_out, float* v_out,
                                int64_t n, const AdamWHyper& hyper, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  adamw_update_kernel<<<blocks_for(n), kThreads, 0, stream>>>(param, grad, m, v, lr, step, param_out, m_out, v_out,
                                                              n, hyper);
  return cudaGetLastError();
}

}  // namespace ucudnn::cuda
