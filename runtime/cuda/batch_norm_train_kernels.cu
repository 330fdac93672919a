// Training batch normalization kernels (see batch_norm_train_kernels.h), written to run at memory
// speed: the statistics read X (BatchNormGrad: dY and X) once, the elementwise pass reads it again and
// writes Y (dX), and nothing per value costs more than its loads, its arithmetic and its store.
// Workspace: the partial sums, [channels][parts][2] doubles, then one float4 of coefficients a channel
// for the elementwise pass (Note [float coefficients]), from the next 16-byte boundary. BatchNormTrain's
// partial sums are of x − K and (x − K)² with K the channel's first value (a shift close to the mean: no
// cancellation in var = E[(x−K)²] − E[x−K]²). Every kernel walks X plane by plane (Note [plane tiles]).
// The fused forms (Note [batch norm with its activation], runtime/ops/batch_norm_train.cc): the apply
// pass adds Z and applies the Relu (eval_pointwise's, Note [one formula per op]); BatchNormGrad's
// partial sums and apply pass mask dY by the forward's Y with ActivationGrad's derivative (Note
// [derivatives at kinks]), and its apply pass writes dZ beside dX. The pointers' being null is the
// same for every thread, so these are uniform branches.
//
// Note [plane tiles]: X [N, C, inner] is N·C planes of `inner` contiguous values; plane p = n·C + c
// belongs to channel c = p mod C, and consecutive planes are consecutive in memory. A thread takes a
// plane's values in groups of `width`: 4 when inner % 4 == 0 (one float4 load when every pointer is
// 16-byte aligned, else four float loads), 1 otherwise. A block's threads form `rows` × `cols`: `cols`
// consecutive groups (one column chunk of a plane, at most kThreads groups) of each of `rows`
// consecutive planes, so a small plane (7×7) is taken several at a time rather than leaving most
// threads idle, and a large one (112×112) in chunks spread over blocks. A thread keeps its column and
// walks planes `rows` apart, kUnroll of them at once (their loads issued together: enough bytes in
// flight to run at memory speed). Its channel is found once and then stepped (+rows mod C), so there is
// no division per value, and offsets within a plane are 32-bit. The geometry depends on the shape
// alone, never on the pointers: the order in which a thread adds its values, and so the sums' last
// bits, are the same whether the groups come as float4s or as floats.
//
// Note [float coefficients]: the elementwise passes compute in float with one float4 of coefficients a
// channel, rounded once from the double statistics: Y = ((x − mean_hi) − mean_lo) · a + B with
// a = scale · inv_std and the mean split into two floats mean_hi + mean_lo, so that a mean far from zero
// costs nothing (x − mean_hi is exact for x within a factor 2 of it), where one coefficient
// b = B − mean · a would lose |mean · a| · 2⁻²⁴. dX = k1 · (g − k2 − (x − mean) · k3) with k1 =
// scale · inv_std, k2 = Σ g / M, k3 = inv_std² · Σ g (x − mean) / M (the saved mean is a float already).
// The last bits differ from a double formula (the references compare with tolerances; PyTorch also
// computes in float). The fused form still rounds the normalised value to float before adding Z.
#include <algorithm>
#include <cstdint>

#include "runtime/cuda/batch_norm_train_kernels.h"
#include "runtime/cuda/grid_loop.cuh"
#include "runtime/ir/pointwise_program.h"
#include "runtime/ops/activation_grad.h"

namespace ucudnn::cuda {

namespace {

enum class Sums { kTrain, kGrad };

constexpr int64_t kSumBlocks = 8192;    // partial-sum blocks wanted in all: several waves on any GPU
constexpr int64_t kMinSteps = 16;       // planes a thread sums at least before its channel is split more
constexpr int64_t kApplyBlocks = 4096;  // blocks of an elementwise pass, each walking several tiles
constexpr int64_t kMaxGridY = 65535;    // CUDA's limit on gridDim.y and gridDim.z

// The block geometry of Note [plane tiles], from `inner` alone.
struct PlaneGeometry {
  int width = 1;     // values of a group: 4 when inner % 4 == 0, else 1
  int groups = 1;    // groups of a plane: inner / width
  int cols = 1;      // threads of a block along a plane (the groups of one column chunk)
  int rows = 1;      // planes a block takes side by side: kThreads / cols
  int chunks = 1;    // column chunks of a plane: ceil(groups / cols)
  int threads = 32;  // block size: cols · rows rounded up to whole warps (at most kThreads)
};

// Groups a thread loads at once from each array (a tile's planes): with one or two arrays read, enough
// bytes in flight for memory speed at the occupancy the registers allow (Note [plane tiles]).
constexpr int kUnroll = 4;

// 1 <= inner <= kBatchNormMaxPlane.
PlaneGeometry plane_geometry(int64_t inner) {
  PlaneGeometry g;
  g.width = inner % 4 == 0 ? 4 : 1;
  const int64_t groups = inner / g.width;
  const int64_t chunks = (groups + kThreads - 1) / kThreads;
  g.groups = static_cast<int>(groups);
  g.chunks = static_cast<int>(chunks);
  g.cols = static_cast<int>((groups + chunks - 1) / chunks);  // chunks as even as they can be, <= kThreads
  g.rows = kThreads / g.cols;
  g.threads = (g.cols * g.rows + 31) / 32 * 32;
  return g;
}

// Blocks of the partial sums across a plane's column chunks (a block adds a run of chunks).
int64_t column_parts(const PlaneGeometry& g, int64_t channels) {
  return std::min<int64_t>(g.chunks, std::max<int64_t>(1, kSumBlocks / channels));
}

// Blocks of the partial sums across the batch: up to kSumBlocks blocks in all, while a thread still
// sums kMinSteps planes.
int64_t plane_parts(const PlaneGeometry& g, int64_t batch, int64_t channels, int64_t columns) {
  const int64_t steps = (batch + g.rows - 1) / g.rows;  // planes a thread sums when the batch is not split
  const int64_t by_blocks = (kSumBlocks + channels * columns - 1) / (channels * columns);
  const int64_t by_work = std::max<int64_t>(1, steps / kMinSteps);
  return std::clamp<int64_t>(std::min(by_blocks, by_work), 1, kMaxGridY);
}

double* partials(void* workspace) { return static_cast<double*>(workspace); }
float4* coefficients(void* workspace, const BatchNormShape& s) {
  const auto end = reinterpret_cast<uintptr_t>(partials(workspace) + 2 * s.channels * s.parts);
  return reinterpret_cast<float4*>((end + 15) / 16 * 16);  // batch_norm_workspace_bytes keeps 16 bytes for this
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// --- groups of values ---

template <int kWidth>
struct Group {
  float v[kWidth];
};

template <int kWidth, bool kAligned>
__device__ __forceinline__ Group<kWidth> load_group(const float* p) {
  Group<kWidth> g;
  if constexpr (kAligned) {
    static_assert(kWidth == 4, "only groups of 4 are loaded as float4");
    const float4 f = *reinterpret_cast<const float4*>(p);
    g.v[0] = f.x, g.v[1] = f.y, g.v[2] = f.z, g.v[3] = f.w;
  } else {
#pragma unroll
    for (int j = 0; j < kWidth; ++j) g.v[j] = p[j];
  }
  return g;
}

template <int kWidth, bool kAligned>
__device__ __forceinline__ void store_group(float* p, const Group<kWidth>& g) {
  if constexpr (kAligned) {
    static_assert(kWidth == 4, "only groups of 4 are stored as float4");
    *reinterpret_cast<float4*>(p) = make_float4(g.v[0], g.v[1], g.v[2], g.v[3]);
  } else {
#pragma unroll
    for (int j = 0; j < kWidth; ++j) p[j] = g.v[j];
  }
}

// dY's group at `at`, masked by the fused Relu on the forward's Y when `fwd_dst` is given.
template <int kWidth, bool kAligned>
__device__ __forceinline__ Group<kWidth> load_masked_grad(const float* grad, const float* fwd_dst, int64_t at) {
  Group<kWidth> g = load_group<kWidth, kAligned>(grad + at);
  if (fwd_dst != nullptr) {
    const Group<kWidth> y = load_group<kWidth, kAligned>(fwd_dst + at);
#pragma unroll
    for (int j = 0; j < kWidth; ++j) g.v[j] *= activation_derivative(ActivationKind::kRelu, y.v[j], 0.f, 0.f, 0.f, 0.f);
  }
  return g;
}

// --- the statistics ---

// Sums the block's per-thread pairs in a fixed order (shuffles within each warp, then the warps in
// order); the block's sums land in thread 0. blockDim.x is a multiple of 32, at most kThreads.
__device__ void block_sum(double& first, double& second) {
  __shared__ double warp_sums[kThreads / 32][2];
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) {
    first += __shfl_down_sync(0xffffffffu, first, offset);
    second += __shfl_down_sync(0xffffffffu, second, offset);
  }
  if (threadIdx.x % 32 == 0) {
    warp_sums[threadIdx.x / 32][0] = first;
    warp_sums[threadIdx.x / 32][1] = second;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (unsigned w = 1; w < blockDim.x / 32; ++w) {
      first += warp_sums[w][0];
      second += warp_sums[w][1];
    }
  }
}

// Block (c = blockIdx.x, column part blockIdx.y, batch part blockIdx.z) sums channel c's values in its
// run of column chunks and its run of planes (Note [plane tiles]) into partials[c][part][0..1], part =
// blockIdx.y · gridDim.z + blockIdx.z. kTrain: Σ (x − K), Σ (x − K)² with K the channel's first value;
// kGrad: Σ dy, Σ dy · (x − mean), dy masked by the Relu on fwd_dst when given. A thread adds its values
// in double in a fixed order, then block_sum: deterministic.
template <Sums kind, int kWidth, bool kAligned>
__global__ void partial_sums_kernel(const float* grad, const float* fwd_dst, const float* src, const float* mean,
                                    BatchNormShape s, PlaneGeometry g, double* out) {
  const int64_t c = blockIdx.x;
  const int64_t chunk_begin = blockIdx.y * int64_t{g.chunks} / gridDim.y;
  const int64_t chunk_end = (blockIdx.y + 1) * int64_t{g.chunks} / gridDim.y;
  const int64_t n_begin = blockIdx.z * s.batch / gridDim.z, n_end = (blockIdx.z + 1) * s.batch / gridDim.z;
  const double shift = kind == Sums::kTrain ? src[c * s.inner] : mean[c];
  const int tx = static_cast<int>(threadIdx.x) % g.cols, ty = static_cast<int>(threadIdx.x) / g.cols;
  const int64_t plane_step = g.rows * s.channels * s.inner;  // values from one of a thread's planes to the next
  double first = 0.0, second = 0.0;
  for (int64_t chunk = chunk_begin; ty < g.rows && chunk < chunk_end; ++chunk) {
    const int64_t col = chunk * g.cols + tx;
    if (col >= g.groups) break;  // past the plane's end in its last chunk
    int64_t at = ((n_begin + ty) * s.channels + c) * s.inner + col * kWidth;
    for (int64_t n = n_begin + ty; n < n_end; n += kUnroll * g.rows, at += kUnroll * plane_step) {
      Group<kWidth> x[kUnroll], dy[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        if (n + u * g.rows >= n_end) continue;
        x[u] = load_group<kWidth, kAligned>(src + at + u * plane_step);
        if constexpr (kind == Sums::kGrad)
          dy[u] = load_masked_grad<kWidth, kAligned>(grad, fwd_dst, at + u * plane_step);
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        if (n + u * g.rows >= n_end) continue;
#pragma unroll
        for (int j = 0; j < kWidth; ++j) {
          const double centered = static_cast<double>(x[u].v[j]) - shift;
          if constexpr (kind == Sums::kTrain) {
            first += centered;
            second += centered * centered;
          } else {
            const double d = dy[u].v[j];
            first += d;
            second += d * centered;
          }
        }
      }
    }
  }
  block_sum(first, second);
  if (threadIdx.x == 0) {
    const int64_t part = blockIdx.y * int64_t{gridDim.z} + blockIdx.z;
    out[(c * s.parts + part) * 2] = first;
    out[(c * s.parts + part) * 2 + 1] = second;
  }
}

// Adds channel c's parts in order into sums[0..1].
__device__ void total(const double* partial, const BatchNormShape& s, int64_t c, double sums[2]) {
  sums[0] = sums[1] = 0.0;
  for (int64_t p = 0; p < s.parts; ++p) {
    sums[0] += partial[(c * s.parts + p) * 2];
    sums[1] += partial[(c * s.parts + p) * 2 + 1];
  }
}

// Statistics, running statistics and the coefficients {mean_hi, mean_lo, scale · inv_std, B} of each
// channel (Note [float coefficients]).
__global__ void train_finalize_kernel(BatchNormTrainArgs a, BatchNormShape s, const double* partial,
                                      float4* coefficient) {
  UCUDNN_GRID_LOOP(c, s.channels) {
    double sums[2];
    total(partial, s, c, sums);
    const double m = static_cast<double>(s.batch * s.inner);
    const double offset = sums[0] / m;  // mean − K
    const double var = fmax(sums[1] / m - offset * offset, 0.0);
    const double mean = a.src[c * s.inner] + offset, inv_std = 1.0 / sqrt(var + a.epsilon);
    const double old_mean = a.running_mean[c], old_var = a.running_var[c];  // before new_running_* is written
    a.new_running_mean[c] = static_cast<float>(old_mean * a.momentum + mean * (1.0 - a.momentum));
    a.new_running_var[c] = static_cast<float>(old_var * a.momentum + var * m / (m - 1.0) * (1.0 - a.momentum));
    const float mean_hi = static_cast<float>(mean);
    a.saved_mean[c] = mean_hi;
    a.saved_inv_std[c] = static_cast<float>(inv_std);
    coefficient[c] = make_float4(mean_hi, static_cast<float>(mean - mean_hi), static_cast<float>(a.scale[c] * inv_std),
                                 a.bias[c]);
  }
}

// dScale, dBias and the coefficients {mean, k1, k2, k3} of each channel (Note [float coefficients]).
__global__ void grad_finalize_kernel(BatchNormGradArgs a, BatchNormShape s, const double* partial,
                                     float4* coefficient) {
  UCUDNN_GRID_LOOP(c, s.channels) {
    double sums[2];
    total(partial, s, c, sums);
    const double m = static_cast<double>(s.batch * s.inner), inv_std = a.saved_inv_std[c];
    a.dbias[c] = static_cast<float>(sums[0]);
    a.dscale[c] = static_cast<float>(sums[1] * inv_std);
    coefficient[c] = make_float4(a.saved_mean[c], static_cast<float>(a.scale[c] * inv_std),
                                 static_cast<float>(sums[0] / m), static_cast<float>(inv_std * inv_std * sums[1] / m));
  }
}

// --- the elementwise passes ---

// How the threads of an elementwise pass step through the planes (Note [plane tiles]): block
// (column chunk blockIdx.x, blockIdx.y) takes tiles of rows · kUnroll planes, gridDim.y tiles apart.
// The channel steps are mod C, computed once on the host.
struct ApplyWalk {
  int64_t planes = 0;                // N · C
  int64_t tile_planes = 0;           // rows · kUnroll
  int64_t stride_planes = 0;         // gridDim.y · tile_planes: from one of a thread's tiles to the next
  unsigned row_channel_step = 0;     // rows mod C: from one of a thread's planes in a tile to the next
  unsigned stride_channel_step = 0;  // stride_planes mod C
};

// One tile of a thread: the offset of its group in each of its planes (−1 past the last plane) and
// their channels.
struct Tile {
  int64_t at[kUnroll];
  unsigned channel[kUnroll];
};

__device__ __forceinline__ unsigned step_channel(unsigned c, unsigned step, unsigned channels) {
  c += step;  // both < channels <= INT32_MAX: no wrap-around
  return c >= channels ? c - channels : c;
}

// A thread's walk over its tiles; the only divisions are in the constructor.
class PlaneWalk {
 public:
  __device__ PlaneWalk(const BatchNormShape& s, const PlaneGeometry& g, const ApplyWalk& w)
      : walk_(w), inner_(s.inner), channels_(static_cast<unsigned>(s.channels)), rows_(g.rows) {
    const int tx = static_cast<int>(threadIdx.x) % g.cols, ty = static_cast<int>(threadIdx.x) / g.cols;
    const int64_t col = int64_t{blockIdx.x} * g.cols + tx;
    column_ = col * g.width;
    plane_ = ty < g.rows && col < g.groups ? blockIdx.y * w.tile_planes + ty : w.planes;  // idle threads: done
    if (plane_ < w.planes)
      channel_ = plane_ <= UINT32_MAX ? static_cast<unsigned>(plane_) % channels_
                                      : static_cast<unsigned>(plane_ % s.channels);
  }

  // Fills `tile` with the next tile; false when the thread has none left.
  __device__ bool next(Tile& tile) {
    if (plane_ >= walk_.planes) return false;
    int64_t plane = plane_;
    unsigned channel = channel_;
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      tile.at[u] = plane < walk_.planes ? plane * inner_ + column_ : -1;
      tile.channel[u] = channel;
      plane += rows_;
      channel = step_channel(channel, walk_.row_channel_step, channels_);
    }
    plane_ += walk_.stride_planes;
    channel_ = step_channel(channel_, walk_.stride_channel_step, channels_);
    return true;
  }

 private:
  ApplyWalk walk_;
  int64_t inner_, column_ = 0, plane_ = 0;
  unsigned channels_, channel_ = 0;
  int rows_;
};

// Y = ((x − mean_hi) − mean_lo) · scale · inv_std + B (Note [float coefficients]), then (fused) + Z
// and the Relu.
template <int kWidth, bool kAligned>
__global__ void train_apply_kernel(const float* src, const float* residual, bool relu, float* dst, BatchNormShape s,
                                   PlaneGeometry g, ApplyWalk w, const float4* coefficient) {
  PlaneWalk walk(s, g, w);
  for (Tile tile; walk.next(tile);) {
    Group<kWidth> x[kUnroll], z[kUnroll];
    float4 k[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {  // every load of the tile first
      if (tile.at[u] < 0) continue;
      x[u] = load_group<kWidth, kAligned>(src + tile.at[u]);
      if (residual != nullptr) z[u] = load_group<kWidth, kAligned>(residual + tile.at[u]);
      k[u] = coefficient[tile.channel[u]];
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (tile.at[u] < 0) continue;
      Group<kWidth> y;
#pragma unroll
      for (int j = 0; j < kWidth; ++j) {
        float v = fmaf((x[u].v[j] - k[u].x) - k[u].y, k[u].z, k[u].w);  // rounded to float before Z is added
        if (residual != nullptr) v += z[u].v[j];
        if (relu) v = ir::eval_pointwise(ir::PointwiseOp::kRelu, v, 0.f, 0.f, 0.f);
        y.v[j] = v;
      }
      store_group<kWidth, kAligned>(dst + tile.at[u], y);
    }
  }
}

// dX = k1 · (g − k2 − (x − mean) · k3) from the (masked) dY g; dZ = g where asked for.
template <int kWidth, bool kAligned>
__global__ void grad_apply_kernel(const float* grad, const float* fwd_dst, const float* src, float* dst,
                                  float* dresidual, BatchNormShape s, PlaneGeometry g, ApplyWalk w,
                                  const float4* coefficient) {
  PlaneWalk walk(s, g, w);
  for (Tile tile; walk.next(tile);) {
    Group<kWidth> dy[kUnroll], x[kUnroll];
    float4 k[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {  // every load of the tile first
      if (tile.at[u] < 0) continue;
      dy[u] = load_masked_grad<kWidth, kAligned>(grad, fwd_dst, tile.at[u]);
      x[u] = load_group<kWidth, kAligned>(src + tile.at[u]);
      k[u] = coefficient[tile.channel[u]];
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (tile.at[u] < 0) continue;
      Group<kWidth> dx;
#pragma unroll
      for (int j = 0; j < kWidth; ++j) dx.v[j] = k[u].y * fmaf(-(x[u].v[j] - k[u].x), k[u].w, dy[u].v[j] - k[u].z);
      store_group<kWidth, kAligned>(dst + tile.at[u], dx);
      if (dresidual != nullptr) store_group<kWidth, kAligned>(dresidual + tile.at[u], dy[u]);
    }
  }
}

// --- launches ---

// The partial sums' grid: channels × column parts × batch parts (s.parts = column parts · batch parts).
dim3 sums_grid(const BatchNormShape& s, const PlaneGeometry& g) {
  const int64_t columns = column_parts(g, s.channels);
  return dim3(static_cast<unsigned>(s.channels), static_cast<unsigned>(columns),
              static_cast<unsigned>(s.parts / columns));
}

// An elementwise pass's grid (column chunks × tile rows, at most about kApplyBlocks blocks) and walk.
dim3 apply_grid(const BatchNormShape& s, const PlaneGeometry& g, ApplyWalk* w) {
  w->planes = s.batch * s.channels;
  w->tile_planes = int64_t{g.rows} * kUnroll;
  const int64_t tiles = (w->planes + w->tile_planes - 1) / w->tile_planes;
  const int64_t grid_y = std::min({tiles, std::max<int64_t>(1, kApplyBlocks / g.chunks), kMaxGridY});
  w->stride_planes = grid_y * w->tile_planes;
  w->row_channel_step = static_cast<unsigned>(g.rows % s.channels);
  w->stride_channel_step = static_cast<unsigned>(w->stride_planes % s.channels);
  return dim3(static_cast<unsigned>(g.chunks), static_cast<unsigned>(grid_y));
}

// Whether the launchers take `s`: its parts are batch_norm_parts' and its planes fit Note [plane tiles].
bool launchable(const BatchNormShape& s) {
  return s.inner >= 1 && s.inner <= kBatchNormMaxPlane && s.channels <= kBatchNormMaxChannels &&
         s.parts == batch_norm_parts(s.batch, s.channels, s.inner);
}

template <int kWidth, bool kAligned>
void queue_train(const BatchNormTrainArgs& a, const BatchNormShape& s, const PlaneGeometry& g, void* workspace,
                 cudaStream_t stream) {
  double* partial = partials(workspace);
  float4* coefficient = coefficients(workspace, s);
  partial_sums_kernel<Sums::kTrain, kWidth, kAligned>
      <<<sums_grid(s, g), g.threads, 0, stream>>>(nullptr, nullptr, a.src, nullptr, s, g, partial);
  train_finalize_kernel<<<blocks_for(s.channels), kThreads, 0, stream>>>(a, s, partial, coefficient);
  ApplyWalk w;
  const dim3 grid = apply_grid(s, g, &w);
  train_apply_kernel<kWidth, kAligned>
      <<<grid, g.threads, 0, stream>>>(a.src, a.residual, a.relu, a.dst, s, g, w, coefficient);
}

template <int kWidth, bool kAligned>
void queue_grad(const BatchNormGradArgs& a, const BatchNormShape& s, const PlaneGeometry& g, void* workspace,
                cudaStream_t stream) {
  double* partial = partials(workspace);
  float4* coefficient = coefficients(workspace, s);
  partial_sums_kernel<Sums::kGrad, kWidth, kAligned>
      <<<sums_grid(s, g), g.threads, 0, stream>>>(a.grad, a.fwd_dst, a.src, a.saved_mean, s, g, partial);
  grad_finalize_kernel<<<blocks_for(s.channels), kThreads, 0, stream>>>(a, s, partial, coefficient);
  ApplyWalk w;
  const dim3 grid = apply_grid(s, g, &w);
  grad_apply_kernel<kWidth, kAligned>
      <<<grid, g.threads, 0, stream>>>(a.grad, a.fwd_dst, a.src, a.dst, a.dresidual, s, g, w, coefficient);
}

}  // namespace

int64_t batch_norm_parts(int64_t batch, int64_t channels, int64_t inner) {
  if (batch < 1 || channels < 1 || inner < 1 || inner > kBatchNormMaxPlane) return 1;  // nothing to split, or refused
  const PlaneGeometry g = plane_geometry(inner);
  const int64_t columns = column_parts(g, channels);
  return columns * plane_parts(g, batch, channels, columns);
}

size_t batch_norm_workspace_bytes(const BatchNormShape& shape) {
  // The partial sums, then the coefficients from the next 16-byte boundary (16 bytes of slack for it).
  return static_cast<size_t>(shape.channels * 2 * shape.parts) * sizeof(double) +
         static_cast<size_t>(shape.channels) * sizeof(float4) + 16;
}

cudaError_t launch_batch_norm_train(const BatchNormTrainArgs& a, const BatchNormShape& s, void* workspace,
                                    cudaStream_t stream) {
  if (s.channels == 0) return cudaSuccess;
  if (s.batch * s.inner < 2 || !launchable(s)) return cudaErrorInvalidValue;
  const PlaneGeometry g = plane_geometry(s.inner);
  if (g.width == 1)
    queue_train<1, false>(a, s, g, workspace, stream);
  else if (aligned16(a.src) && aligned16(a.dst) && aligned16(a.residual))
    queue_train<4, true>(a, s, g, workspace, stream);
  else
    queue_train<4, false>(a, s, g, workspace, stream);
  return cudaGetLastError();
}

cudaError_t launch_batch_norm_grad(const BatchNormGradArgs& a, const BatchNormShape& s, void* workspace,
                                   cudaStream_t stream) {
  if (s.channels == 0) return cudaSuccess;
  if (s.batch * s.inner < 1 || !launchable(s)) return cudaErrorInvalidValue;
  const PlaneGeometry g = plane_geometry(s.inner);
  if (g.width == 1)
    queue_grad<1, false>(a, s, g, workspace, stream);
  else if (aligned16(a.grad) && aligned16(a.src) && aligned16(a.dst) && aligned16(a.fwd_dst) &&
           aligned16(a.dresidual))
    queue_grad<4, true>(a, s, g, workspace, stream);
  else
    queue_grad<4, false>(a, s, g, workspace, stream);
  return cudaGetLastError();
}

}  // namespace ucudnn::cuda
