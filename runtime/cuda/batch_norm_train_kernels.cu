// Training batch normalization kernels (see batch_norm_train_kernels.h). Workspace: the partial
// sums, [channels][parts][2] doubles, then [channels][3] doubles of per-channel coefficients for
// the elementwise pass. BatchNormTrain's partial sums are of x − K and (x − K)² with K the channel's
// first value (a shift close to the mean: no cancellation in var = E[(x−K)²] − E[x−K]²).
// The elementwise passes index with 32-bit integers when the tensor allows (the channel of element i
// is (i / inner) % channels: a 64-bit division per element would cost more than its memory traffic).
#include <cstdint>
#include <initializer_list>
#include <type_traits>

#include "runtime/cuda/batch_norm_train_kernels.h"
#include "runtime/cuda/grid_loop.cuh"
#include "runtime/ir/pointwise_program.h"
#include "runtime/ops/activation_grad.h"

namespace ucudnn::cuda {

namespace {

enum class Sums { kTrain, kGrad };

// dY masked by the fused Relu: ActivationGrad's rule for Relu on the forward's output Y, the same
// function as the CPU's (Note [derivatives at kinks], runtime/ops/activation_grad.h).
__device__ __forceinline__ float relu_masked(float dy, float y) {
  return dy * activation_derivative(ActivationKind::kRelu, y, 0.0f, 0.0f, 0.0f, 0.0f);
}

// Where channel c's first value is (its shift K): row 0, column 0.
__device__ __forceinline__ int64_t first_value(const BatchNormShape& s, int64_t c) {
  return s.channels_last ? c : c * s.inner;
}

double* partials(void* workspace) { return static_cast<double*>(workspace); }
double* coefficients(void* workspace, const BatchNormShape& s) {
  return static_cast<double*>(workspace) + 2 * s.channels * s.parts;
}

// Adds an element's terms to the two sums: kTrain x − K and (x − K)²; kGrad g and g · (x − mean), with
// g = dy, masked by Relu'(y) when `masked`. `shift` is K or the mean.
template <Sums kind>
__device__ __forceinline__ void accumulate(float x, float dy, float y, bool masked, double shift, double& first,
                                           double& second) {
  const double centered = static_cast<double>(x) - shift;
  if constexpr (kind == Sums::kTrain) {
    first += centered;
    second += centered * centered;
  } else {
    const double g = masked ? relu_masked(dy, y) : dy;
    first += g;
    second += g * centered;
  }
}

// Block (c = blockIdx.x, part = blockIdx.y) sums a contiguous slice of channel c's values
// (value j at row j / inner, column j % inner) into partials[c][part][0..1].
// kTrain: Σ (x − K), Σ (x − K)² with K the channel's first value; kGrad: Σ g, Σ g · (x − mean) with
// g = dy, or dy · Relu'(y) when `forward` (the fused forward's Y) is given.
template <Sums kind>
__global__ void partial_sums_kernel(const float* grad, const float* forward, const float* src, const float* mean,
                                    BatchNormShape s, double* out) {
  __shared__ double shared[2][kThreads];
  const int64_t c = blockIdx.x, part = blockIdx.y, count = s.batch * s.inner;
  const int64_t chunk = (count + s.parts - 1) / s.parts;
  const int64_t begin = part * chunk, end = begin + chunk < count ? begin + chunk : count;
  const double shift = kind == Sums::kTrain ? src[first_value(s, c)] : mean[c];
  const int64_t step_rows = kThreads / s.inner, step_columns = kThreads % s.inner;
  double first = 0.0, second = 0.0;
  int64_t j = begin + threadIdx.x, row = j / s.inner, column = j % s.inner;
  for (; j < end; j += kThreads) {
    const int64_t at = (row * s.channels + c) * s.inner + column;
    accumulate<kind>(src[at], kind == Sums::kGrad ? grad[at] : 0.0f, forward != nullptr ? forward[at] : 0.0f,
                     forward != nullptr, shift, first, second);
    row += step_rows;
    column += step_columns;
    if (column >= s.inner) {
      column -= s.inner;
      ++row;
    }
  }
  shared[0][threadIdx.x] = first;
  shared[1][threadIdx.x] = second;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
      shared[0][threadIdx.x] += shared[0][threadIdx.x + half];
      shared[1][threadIdx.x] += shared[1][threadIdx.x + half];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    out[(c * s.parts + part) * 2] = shared[0][0];
    out[(c * s.parts + part) * 2 + 1] = shared[1][0];
  }
}

// NHWC: X as [batch · inner rows][channels]. Block (channels from kVec · (32·blockIdx.x + threadIdx.x),
// part blockIdx.y) of 32 × kRowLanes threads: each thread kVec consecutive channels (kVec = 4: one
// 16-byte load a tensor, so a warp reads 512 contiguous bytes of a row), threadIdx.y striding over the
// part's rows; the row lanes' sums are added in order. Same sums, same partials[c][part] as
// partial_sums_kernel.
constexpr int kRowLanes = kThreads / 32;

// kVec consecutive floats from p (16-byte aligned when kVec is 4).
template <int kVec>
__device__ __forceinline__ void load(const float* p, float (&v)[kVec]) {
  if constexpr (kVec == 4) {
    const float4 q = *reinterpret_cast<const float4*>(p);
    v[0] = q.x, v[1] = q.y, v[2] = q.z, v[3] = q.w;
  } else {
    for (int k = 0; k < kVec; ++k) v[k] = p[k];
  }
}
template <int kVec>
__device__ __forceinline__ void store(float* p, const float (&v)[kVec]) {
  if constexpr (kVec == 4) {
    *reinterpret_cast<float4*>(p) = make_float4(v[0], v[1], v[2], v[3]);
  } else {
    for (int k = 0; k < kVec; ++k) p[k] = v[k];
  }
}

template <Sums kind, int kVec>
__global__ void partial_sums_nhwc_kernel(const float* grad, const float* forward, const float* src, const float* mean,
                                         BatchNormShape s, double* out) {
  __shared__ double shared[2][kRowLanes][32 * kVec];
  const int64_t c = (blockIdx.x * int64_t{32} + threadIdx.x) * kVec, part = blockIdx.y, rows = s.batch * s.inner;
  const int64_t chunk = (rows + s.parts - 1) / s.parts;
  const int64_t begin = part * chunk, end = begin + chunk < rows ? begin + chunk : rows;
  double first[kVec] = {}, second[kVec] = {};
  if (c < s.channels) {  // and so are c + 1 .. c + kVec − 1 (kVec divides the channels)
    double shift[kVec];
    for (int k = 0; k < kVec; ++k) shift[k] = kind == Sums::kTrain ? src[first_value(s, c + k)] : mean[c + k];
    for (int64_t r = begin + threadIdx.y; r < end; r += kRowLanes) {
      const int64_t at = r * s.channels + c;
      float x[kVec], g[kVec] = {}, y[kVec] = {};
      load<kVec>(src + at, x);
      if constexpr (kind == Sums::kGrad) {
        load<kVec>(grad + at, g);
        if (forward != nullptr) load<kVec>(forward + at, y);
      }
      for (int k = 0; k < kVec; ++k)
        accumulate<kind>(x[k], g[k], y[k], forward != nullptr, shift[k], first[k], second[k]);
    }
  }
  for (int k = 0; k < kVec; ++k) {
    shared[0][threadIdx.y][threadIdx.x * kVec + k] = first[k];
    shared[1][threadIdx.y][threadIdx.x * kVec + k] = second[k];
  }
  __syncthreads();
  if (threadIdx.y != 0 || c >= s.channels) return;
  for (int k = 0; k < kVec; ++k) {
    double a = 0.0, b = 0.0;
    for (int lane = 0; lane < kRowLanes; ++lane) {
      a += shared[0][lane][threadIdx.x * kVec + k];
      b += shared[1][lane][threadIdx.x * kVec + k];
    }
    out[((c + k) * s.parts + part) * 2] = a;
    out[((c + k) * s.parts + part) * 2 + 1] = b;
  }
}

bool aligned16(const void* p) { return p == nullptr || reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// Note [4-wide batch-norm loads]: BatchNormTrain's passes read and write 4 floats a thread where the
// layout allows (below); BatchNormGrad's stay 1-wide. On an H100, ResNet-50 at batch 256 NHWC
// (scripts/gpu_training_check.sh, 2026-12-08): BatchNormTrain 19.5 → 17.8 ms a step with 4-wide passes,
// BatchNormGrad 32.2 → 61.7 ms — its three input streams a thread, 4 wide, left too few threads in flight.

// 4-wide NHWC loads: channels a multiple of 4 and every tensor 16-byte aligned.
bool nhwc_vectors(const BatchNormShape& s, std::initializer_list<const void*> tensors) {
  if (!s.channels_last || s.channels % 4 != 0) return false;
  for (const void* p : tensors)
    if (!aligned16(p)) return false;
  return true;
}

// Queues the partial sums of `kind` in s's layout.
template <Sums kind>
void launch_partial_sums(const float* grad, const float* forward, const float* src, const float* mean,
                         const BatchNormShape& s, double* out, cudaStream_t stream) {
  const unsigned parts = static_cast<unsigned>(s.parts);
  if (kind == Sums::kTrain && nhwc_vectors(s, {grad, forward, src}))  // Note [4-wide batch-norm loads]
    partial_sums_nhwc_kernel<kind, 4><<<dim3(static_cast<unsigned>((s.channels + 127) / 128), parts),
                                         dim3(32, kRowLanes), 0, stream>>>(grad, forward, src, mean, s, out);
  else if (s.channels_last)
    partial_sums_nhwc_kernel<kind, 1><<<dim3(static_cast<unsigned>((s.channels + 31) / 32), parts),
                                         dim3(32, kRowLanes), 0, stream>>>(grad, forward, src, mean, s, out);
  else
    partial_sums_kernel<kind><<<dim3(static_cast<unsigned>(s.channels), parts), kThreads, 0, stream>>>(
        grad, forward, src, mean, s, out);
}

// Adds channel c's parts in order into sums[0..1].
__device__ void total(const double* partial, const BatchNormShape& s, int64_t c, double sums[2]) {
  sums[0] = sums[1] = 0.0;
  for (int64_t p = 0; p < s.parts; ++p) {
    sums[0] += partial[(c * s.parts + p) * 2];
    sums[1] += partial[(c * s.parts + p) * 2 + 1];
  }
}

// Statistics, running statistics and the coefficients (mean, scale · inv_std, B) of each channel.
__global__ void train_finalize_kernel(BatchNormTrainArgs a, BatchNormShape s, const double* partial,
                                      double* coefficient) {
  UCUDNN_GRID_LOOP(c, s.channels) {
    double sums[2];
    total(partial, s, c, sums);
    const double m = static_cast<double>(s.batch * s.inner);
    const double offset = sums[0] / m;  // mean − K
    const double var = fmax(sums[1] / m - offset * offset, 0.0);
    const double mean = a.src[first_value(s, c)] + offset, inv_std = 1.0 / sqrt(var + a.epsilon);
    const double old_mean = a.running_mean[c], old_var = a.running_var[c];  // before new_running_* is written
    a.new_running_mean[c] = static_cast<float>(old_mean * a.momentum + mean * (1.0 - a.momentum));
    a.new_running_var[c] = static_cast<float>(old_var * a.momentum + var * m / (m - 1.0) * (1.0 - a.momentum));
    a.saved_mean[c] = static_cast<float>(mean);
    a.saved_inv_std[c] = static_cast<float>(inv_std);
    coefficient[c * 3] = mean;
    coefficient[c * 3 + 1] = a.scale[c] * inv_std;
    coefficient[c * 3 + 2] = a.bias[c];
  }
}

// Y = relu?(float((x − mean) · k + B) [+ z]) over kVec consecutive elements a thread (n a multiple of
// kVec, the tensors 16-byte aligned when kVec is 4); Index is int64_t, or uint32_t when n fits. Element
// i's channel is (i / run) % channels: run = inner in NCHW (kVec elements of one channel when kVec
// divides it), 1 in NHWC (kVec consecutive channels when kVec divides the channels).
template <typename Index, int kVec>
__global__ void train_apply_kernel(const float* src, const float* residual, float* dst, Index n, Index run,
                                   Index channels, bool relu, const double* coefficient) {
  for (Index i = (blockIdx.x * Index{blockDim.x} + threadIdx.x) * kVec; i < n;
       i += Index{blockDim.x} * gridDim.x * kVec) {
    const Index c = (i / run) % channels;
    float x[kVec], z[kVec], y[kVec];
    load<kVec>(src + i, x);
    if (residual != nullptr) load<kVec>(residual + i, z);
    for (int v = 0; v < kVec; ++v) {
      const double* k = coefficient + (run == 1 ? c + v : c) * 3;
      float out = static_cast<float>((x[v] - k[0]) * k[1] + k[2]);
      if (residual != nullptr) out += z[v];
      if (relu) out = ir::eval_pointwise(ir::PointwiseOp::kRelu, out, 0.0f, 0.0f, 0.0f);  // Note [one formula per op]
      y[v] = out;
    }
    store<kVec>(dst + i, y);
  }
}

// dScale, dBias and the coefficients (mean, scale · inv_std, mean of dY, inv_std² · Σ dy (x − mean) / M).
__global__ void grad_finalize_kernel(BatchNormGradArgs a, BatchNormShape s, const double* partial,
                                     double* coefficient) {
  UCUDNN_GRID_LOOP(c, s.channels) {
    double sums[2];
    total(partial, s, c, sums);
    const double m = static_cast<double>(s.batch * s.inner), inv_std = a.saved_inv_std[c];
    a.dbias[c] = static_cast<float>(sums[0]);
    a.dscale[c] = static_cast<float>(sums[1] * inv_std);
    coefficient[c * 4] = a.saved_mean[c];
    coefficient[c * 4 + 1] = a.scale[c] * inv_std;
    coefficient[c * 4 + 2] = sums[0] / m;
    coefficient[c * 4 + 3] = inv_std * inv_std * sums[1] / m;
  }
}

// dX = k · (g − mean_g − (x − mean) · slope), dZ = g; Index and kVec as train_apply_kernel's.
template <typename Index, int kVec>
__global__ void grad_apply_kernel(const float* grad, const float* forward, const float* src, float* dst,
                                  float* dresidual, Index n, Index run, Index channels, const double* coefficient) {
  for (Index i = (blockIdx.x * Index{blockDim.x} + threadIdx.x) * kVec; i < n;
       i += Index{blockDim.x} * gridDim.x * kVec) {
    const Index c = (i / run) % channels;
    float dy[kVec], y[kVec], x[kVec], dx[kVec];
    load<kVec>(grad + i, dy);
    if (forward != nullptr) load<kVec>(forward + i, y);
    load<kVec>(src + i, x);
    for (int v = 0; v < kVec; ++v) {
      const double* k = coefficient + (run == 1 ? c + v : c) * 4;
      if (forward != nullptr) dy[v] = relu_masked(dy[v], y[v]);
      dx[v] = static_cast<float>(k[1] * (dy[v] - k[2] - (x[v] - k[0]) * k[3]));
    }
    store<kVec>(dst + i, dx);
    if (dresidual != nullptr) store<kVec>(dresidual + i, dy);
  }
}

// Calls launch(Index{}, std::integral_constant<int, kVec>{}, blocks) for the elementwise pass over n
// elements: 32-bit indices when they fit; with `four_wide`, 4 elements a thread when a channel's run
// (NCHW: inner) or the channels (NHWC) are a multiple of 4 and every tensor is 16-byte aligned.
template <typename Launch>
void launch_apply(const BatchNormShape& s, bool four_wide, std::initializer_list<const void*> tensors, int64_t n,
                  Launch launch) {
  bool vec = four_wide && (s.channels_last ? s.channels : s.inner) % 4 == 0;
  for (const void* p : tensors) vec = vec && aligned16(p);
  const unsigned blocks = blocks_for(vec ? n / 4 : n);
  auto with_index = [&](auto vector) {
    if (fits_uint32_loop(n, 4)) launch(uint32_t{}, vector, blocks);
    else launch(int64_t{}, vector, blocks);
  };
  if (vec) with_index(std::integral_constant<int, 4>{});
  else with_index(std::integral_constant<int, 1>{});
}

}  // namespace

int64_t batch_norm_parts(int64_t batch, int64_t channels, int64_t inner, bool channels_last) {
  // About 2048 blocks in all (a few waves on any GPU), a part no smaller than 16 values a thread:
  // NCHW has a block a channel, NHWC one per 32 channels with kRowLanes threads over rows (BatchNormTrain's
  // 4-wide sums take a block per 128 channels in as many parts).
  const int64_t count = batch * inner, per_part = int64_t{16} * (channels_last ? kRowLanes : kThreads);
  const int64_t wanted = (count + per_part - 1) / per_part;
  const int64_t blocks = channels_last ? (channels + 31) / 32 : channels;
  const int64_t cap = blocks > 0 && blocks < 2048 ? 2048 / blocks : 1;
  return wanted < 1 ? 1 : (wanted < cap ? wanted : cap);
}

size_t batch_norm_workspace_bytes(const BatchNormShape& shape) {
  return static_cast<size_t>(shape.channels * (2 * shape.parts + 4)) * sizeof(double);
}

cudaError_t launch_batch_norm_train(const BatchNormTrainArgs& a, const BatchNormShape& s, void* workspace,
                                    cudaStream_t stream) {
  if (s.channels == 0) return cudaSuccess;
  if (s.batch * s.inner < 2 || s.parts < 1 || s.parts > 65535) return cudaErrorInvalidValue;
  launch_partial_sums<Sums::kTrain>(nullptr, nullptr, a.src, nullptr, s, partials(workspace), stream);
  train_finalize_kernel<<<blocks_for(s.channels), kThreads, 0, stream>>>(a, s, partials(workspace),
                                                                        coefficients(workspace, s));
  const int64_t n = s.batch * s.channels * s.inner;
  launch_apply(s, true, {a.src, a.residual, a.dst}, n, [&](auto index, auto vec, unsigned blocks) {
    using Index = decltype(index);
    train_apply_kernel<Index, decltype(vec)::value><<<blocks, kThreads, 0, stream>>>(
        a.src, a.residual, a.dst, static_cast<Index>(n), static_cast<Index>(s.channels_last ? 1 : s.inner),
        static_cast<Index>(s.channels), a.relu, coefficients(workspace, s));
  });
  return cudaGetLastError();
}

cudaError_t launch_batch_norm_grad(const BatchNormGradArgs& a, const BatchNormShape& s, void* workspace,
                                   cudaStream_t stream) {
  if (s.channels == 0) return cudaSuccess;
  if (s.batch * s.inner < 1 || s.parts < 1 || s.parts > 65535) return cudaErrorInvalidValue;
  if (a.relu != (a.forward_output != nullptr)) return cudaErrorInvalidValue;
  const float* forward = a.relu ? a.forward_output : nullptr;
  launch_partial_sums<Sums::kGrad>(a.grad, forward, a.src, a.saved_mean, s, partials(workspace), stream);
  grad_finalize_kernel<<<blocks_for(s.channels), kThreads, 0, stream>>>(a, s, partials(workspace),
                                                                       coefficients(workspace, s));
  const int64_t n = s.batch * s.channels * s.inner;
  // Note [4-wide batch-norm loads]: 1-wide.
  launch_apply(s, false, {a.grad, forward, a.src, a.dst, a.dresidual}, n, [&](auto index, auto vec, unsigned blocks) {
    using Index = decltype(index);
    grad_apply_kernel<Index, decltype(vec)::value><<<blocks, kThreads, 0, stream>>>(
        a.grad, forward, a.src, a.dst, a.dresidual, static_cast<Index>(n),
        static_cast<Index>(s.channels_last ? 1 : s.inner), static_cast<Index>(s.channels),
        coefficients(workspace, s));
  });
  return cudaGetLastError();
}

}  // namespace ucudnn::cuda
