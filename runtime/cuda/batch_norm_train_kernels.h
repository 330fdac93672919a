// Launchers of the training batch normalization kernels (runtime/cuda/batch_norm_train_kernels.cu)
// over X [batch, channels, inner] (NCHW; inner = prod(spatial)) or [batch, inner, channels] (NHWC,
// channels_last), M = batch · inner values a channel.
// Each per-channel sum runs in two stages: a grid of (channels, part) blocks writes double partial
// sums to the workspace, then one thread a channel adds its parts in a fixed order — deterministic,
// no atomics — and a last elementwise pass writes Y or dX. Each only queues work on `stream` and
// returns the launch error. The running statistics may be bound to the same memory as their new
// values: each channel's thread reads the old value before writing the new one.
// The fused forms (Note [batch norm with its activation], runtime/ops/batch_norm_train.cc): the
// forward adds the residual Z and applies the Relu in the pass that writes Y; the backward masks dY by
// the forward's Y in both passes and writes dZ beside dX.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace ucudnn::cuda {

struct BatchNormShape {
  int64_t batch = 0, channels = 0, inner = 1;
  int64_t parts = 1;  // blocks a channel's sums are split across: batch_norm_parts()
  bool channels_last = false;  // NHWC (Note [channels-last], runtime/ir/layout.h)
};

// The parts for X's shape and layout (enough blocks to fill a GPU, at least 1).
int64_t batch_norm_parts(int64_t batch, int64_t channels, int64_t inner, bool channels_last);
// Workspace bytes both launchers need for `shape` (8-byte aligned).
size_t batch_norm_workspace_bytes(const BatchNormShape& shape);

struct BatchNormTrainArgs {
  const float *src, *scale, *bias, *running_mean, *running_var;
  float *dst, *new_running_mean, *new_running_var, *saved_mean, *saved_inv_std;
  float epsilon, momentum;
  const float* residual = nullptr;  // Z like X, or none
  bool relu = false;
};
// Y = relu?((X − mean) · inv_std · scale + B [+ Z]) with the batch statistics (module header of
// runtime/ops/batch_norm_train.cc), the normalised value rounded to float before Z is added;
// saved_*, new_running_* per channel.
cudaError_t launch_batch_norm_train(const BatchNormTrainArgs& args, const BatchNormShape& shape, void* workspace,
                                    cudaStream_t stream);

struct BatchNormGradArgs {
  const float *grad, *src, *scale, *saved_mean, *saved_inv_std;
  float *dst, *dscale, *dbias;
  const float* forward_output = nullptr;  // the fused forward's Y (relu): g = dY · Relu'(Y)
  float* dresidual = nullptr;             // dZ = g, or none
  bool relu = false;
};
// With g = dY (masked by Relu'(Y) when relu): dBias = Σ g, dScale = Σ g · x̂,
// dX = scale · inv_std · (g − dBias / M − x̂ · dScale / M), and dZ = g where asked.
cudaError_t launch_batch_norm_grad(const BatchNormGradArgs& args, const BatchNormShape& shape, void* workspace,
                                   cudaStream_t stream);

}  // namespace ucudnn::cuda
