// Launchers of the softmax_loss family's own CUDA kernels
// (runtime/cuda/softmax_loss_kernels.cu): SoftmaxCrossEntropyMean and its gradient.
// Same contracts as kernels.h: each only queues work on `stream`
// and returns the launch error; int64 index arithmetic. Every sum runs in a fixed
// order (per-thread partial sums, then a tree in the block), so results repeat
// bit for bit from run to run.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "runtime/cuda/kernels.h"

namespace ucudnn::cuda {

// log_prob = log-softmax of each row of scores [rows, classes] (max-subtracted), and
// *loss = −(1/rows) Σ_r Σ_c q_rc log_prob_rc, q = (1 − smoothing)·onehot(labels[r]) +
// smoothing/classes. Labels are only compared, never used as addresses (callers
// refuse ones outside [0, classes) first; such a label contributes no onehot term).
cudaError_t launch_softmax_cross_entropy(const float* scores, const int64_t* labels, float* loss, float* log_prob,
                                         int64_t rows, int64_t classes, float smoothing, cudaStream_t stream);

// d_scores = (*d_loss / rows) · (exp(log_prob) − q), q as above; *d_loss read on the device.
cudaError_t launch_softmax_cross_entropy_grad(const float* d_loss, const float* log_prob, const int64_t* labels,
                                              float* d_scores, int64_t rows, int64_t classes, float smoothing,
                                              cudaStream_t stream);

}  // namespace ucudnn::cuda
