// Launchers of the optimizer-update kernels (runtime/cuda/optimizer_update_kernels.cu), callable
// from plain C++: torch.optim.SGD and torch.optim.AdamW steps over one parameter, in PyTorch's
// order of operations (runtime/cpu/optimizer_update.cc has the formulas).
//
// lr (one float) and step (one int64, the first update is 1) are read on the device, so a
// schedule changes them without a host sync; the per-step scalars are computed in double by
// every thread. Each output may be the same memory as its input: a thread reads element i
// before writing it. Launchers only queue work on `stream` and return the launch error.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace ucudnn::cuda {

struct SgdHyper {
  float momentum = 0, dampening = 0, weight_decay = 0;
  bool nesterov = false;
};

// param_out = param − lr·g and buffer_out = the momentum buffer (SgdUpdate), n elements each.
cudaError_t launch_sgd_update(const float* param, const float* grad, const float* buffer, const float* lr,
                              const int64_t* step, float* param_out, float* buffer_out, int64_t n,
                              const SgdHyper& hyper, cudaStream_t stream);

struct AdamWHyper {
  float beta1 = 0.9f, beta2 = 0.999f, epsilon = 1e-8f, weight_decay = 0.01f;
};

// param_out, m_out, v_out after one AdamW step (AdamWUpdate), n elements each.
cudaError_t launch_adamw_update(const float* param, const float* grad, const float* m, const float* v,
                                const float* lr, const int64_t* step, float* param_out, float* m_out, float* v_out,
                                int64_t n, const AdamWHyper& hyper, cudaStream_t stream);

}  // namespace ucudnn::cuda
