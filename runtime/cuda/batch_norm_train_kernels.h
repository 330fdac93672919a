// Launchers of the training batch normalization kernels (runtime/cuda/batch_norm_train_kernels.cu)
// over X [batch, channels, inner] (NCHW; inner = prod(spatial)), M = batch · inner values a channel.
// Each per-channel sum runs in two stages: a grid of (channel, part) blocks, each taking a run of the
// channel's planes (and of column chunks of large planes), writes double partial sums to the
// workspace, then one thread a channel adds its parts in a fixed order — deterministic, no atomics —
// and a last elementwise pass, plane by plane, writes Y or dX in float (Note [plane tiles], Note [float
// coefficients] in the .cu). Each only queues work on `stream` and returns the launch error. The
// running statistics may be bound to the same memory as their new values: each channel's thread reads
// the old value before writing the new one.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace ucudnn::cuda {

struct BatchNormShape {
  int64_t batch = 0, channels = 0, inner = 1;
  int64_t parts = 1;  // blocks a channel's sums are split across: batch_norm_parts(), nothing else
};

// Planes of more values than this are refused (offsets within a plane are 32-bit), as are more channels.
constexpr int64_t kBatchNormMaxPlane = INT32_MAX, kBatchNormMaxChannels = INT32_MAX;

// The parts for X's shape, from the shape alone (enough blocks to fill a GPU, at least 1).
int64_t batch_norm_parts(int64_t batch, int64_t channels, int64_t inner);
// Workspace bytes both launchers need for `shape` (8-byte aligned).
size_t batch_norm_workspace_bytes(const BatchNormShape& shape);

struct BatchNormTrainArgs {
  const float *src, *scale, *bias, *running_mean, *running_var;
  float *dst, *new_running_mean, *new_running_var, *saved_mean, *saved_inv_std;
  float epsilon, momentum;
  const float* residual = nullptr;  // Z, added before the activation; nullptr: none
  bool relu = false;                // the fused Relu
};
// Y = (X − mean) · inv_std · scale + B with the batch statistics (module header of
// runtime/ops/batch_norm_train.cc); saved_*, new_running_* per channel. Fused (Note [batch norm with
// its activation]): Y = relu(that, rounded to float, + Z), in the same elementwise pass.
cudaError_t launch_batch_norm_train(const BatchNormTrainArgs& args, const BatchNormShape& shape, void* workspace,
                                    cudaStream_t stream);

struct BatchNormGradArgs {
  const float *grad, *src, *scale, *saved_mean, *saved_inv_std;
  float *dst, *dscale, *dbias;
  const float* fwd_dst = nullptr;  // the fused forward's Y, whose Relu masks dY; nullptr: no activation
  float* dresidual = nullptr;      // dZ, the masked dY; nullptr: not asked for
};
// dBias = Σ dY, dScale = Σ dY · x̂, dX = scale · inv_std · (dY − dBias / M − x̂ · dScale / M). With
// fwd_dst, dY is first masked by the Relu (ActivationGrad's rule on Y) in both passes, and dresidual
// gets the masked dY in the pass that writes dX.
cudaError_t launch_batch_norm_grad(const BatchNormGradArgs& args, const BatchNormShape& shape, void* workspace,
                                   cudaStream_t stream);

}  // namespace ucudnn::cuda
