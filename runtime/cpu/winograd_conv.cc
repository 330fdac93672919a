// Winograd F(4×4, 3×3) on the CPU (see winograd_conv.h). Tiles are numbered t = (n·TH + ty)·TW + tx
// (TH = ⌈OH/4⌉, TW = ⌈OW/4⌉); within a chunk or a thread's block the transformed input is [36][tiles][C]
// and the GEMMs' output [36][tiles][M], so point ξ's GEMM is [tiles, C] × [C, M] on row-major matrices. Every pass
// works on runs of kLanes channels, contiguous in NHWC, so the transforms vectorise.
#include "runtime/cpu/winograd_conv.h"

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include <omp.h>

#ifdef UCUDNN_HAVE_ONEDNN
#include <dnnl.h>
#include <dnnl_config.h>
// multiply() calls dnnl_sgemm inside an OpenMP region and relies on it running on the calling thread
// there; oneDNN does that only on the same OpenMP runtime (a TBB build would start threads per call).
static_assert(DNNL_CPU_THREADING_RUNTIME == DNNL_RUNTIME_OMP, "Winograd's GEMMs need oneDNN built on OpenMP");
#endif

#include "runtime/core/bytes.h"
#include "runtime/cpu/shared_weights.h"
#include "runtime/cpu/vector_activations.h"

namespace ucudnn::cpu::winograd {

namespace {

constexpr int64_t kLanes = 16;                      // channels per vector run
constexpr int64_t kPoints = 36;                     // 6×6 transformed points per tile
constexpr size_t kChunkBytes = size_t{8} << 20;    // Note [Winograd chunks]
constexpr int64_t kMinChunkTiles = 16;
constexpr int64_t kGemmRows = 128, kGemmCols = 256;  // one GEMM work item's block of [tiles, M]
constexpr size_t kBlockBytes = size_t{1} << 20;        // Note [Winograd tile blocks]: a thread's tiles
constexpr size_t kBlockFilterBytes = size_t{5} << 19;  // and the most transformed filters (2.5 MiB)

int64_t tiles_high(const ConvProblem& p) { return (p.out_h + 3) / 4; }
int64_t tiles_wide(const ConvProblem& p) { return (p.out_w + 3) / 4; }
int64_t tile_count(const ConvProblem& p) { return p.batch * tiles_high(p) * tiles_wide(p); }

// Tile t's sample and its top-left output position.
struct TilePosition {
  int64_t n = 0, y = 0, x = 0;
};
TilePosition tile_position(const ConvProblem& p, int64_t t) {
  const int64_t th = tiles_high(p), tw = tiles_wide(p);
  return {t / (th * tw), 4 * (t / tw % th), 4 * (t % tw)};
}

// Tiles per chunk (Note [Winograd chunks]), spread evenly over the chunks; 0 when there are no tiles.
int64_t chunk_capacity(const ConvProblem& p) {
  const int64_t total = tile_count(p);
  if (total == 0) return 0;
  const size_t per_tile = saturating_mul(saturating_mul(static_cast<size_t>(kPoints),
                                                        static_cast<size_t>(p.in_channels + p.out_channels)),
                                         sizeof(float));
  const int64_t budget = std::max(kMinChunkTiles, static_cast<int64_t>(kChunkBytes / per_tile));
  const int64_t chunks = (total + budget - 1) / budget;
  return (total + chunks - 1) / chunks;
}

size_t float_bytes(int64_t a, int64_t b, int64_t c) {
  return saturating_mul(saturating_mul(saturating_mul(static_cast<size_t>(a), static_cast<size_t>(b)),
                                       static_cast<size_t>(c)),
                        sizeof(float));
}

}  // namespace

// The blocks of all threads together fit the chunk buffers: threads · block <= chunk_capacity(p), so the
// workspace does not depend on the thread count.
int64_t tiles_per_block(const ConvProblem& p, int threads) {
  if (threads <= 1 || !applies(p) || float_bytes(kPoints, p.in_channels, p.out_channels) > kBlockFilterBytes)
    return 0;
  const size_t per_tile = float_bytes(kPoints, 1, p.in_channels + p.out_channels);
  const int64_t by_cache = static_cast<int64_t>(kBlockBytes / per_tile);
  const int64_t block = std::min(chunk_capacity(p) / threads, by_cache);
  if (block < kMinChunkTiles || tile_count(p) < 2 * threads * block) return 0;  // thin GEMMs, idle threads
  return block;
}

namespace {

// The workspace: [transformed input chunk | GEMM output chunk | transformed weights (W not constant)];
// offsets of the last two and the total, SIZE_MAX when it does not fit. All zero without tiles.
struct WorkspaceLayout {
  size_t products_offset = 0, weights_offset = 0, total = 0;
};

WorkspaceLayout workspace_layout(const ConvProblem& p, bool weights_in_workspace) {
  const int64_t tiles = chunk_capacity(p);
  WorkspaceLayout l;
  if (tiles == 0) return l;
  constexpr size_t kTooBig = std::numeric_limits<size_t>::max();
  size_t inputs = 0, products = 0;
  if (!checked_align_up(float_bytes(kPoints, tiles, p.in_channels), kBufferAlignment, &inputs) ||
      !checked_align_up(float_bytes(kPoints, tiles, p.out_channels), kBufferAlignment, &products))
    return {kTooBig, kTooBig, kTooBig};
  l.products_offset = inputs;
  l.weights_offset = saturating_add(inputs, products);
  l.total = weights_in_workspace
                ? saturating_add(l.weights_offset, float_bytes(kPoints, p.in_channels, p.out_channels))
                : l.weights_offset;
  return l;
}

// U[ξ][c][m] = (G g Gᵀ)[ξ] for W [M, 3, 3, C] (Note [Winograd weights]).
void transform_weights(const ConvProblem& p, const float* w, float* u) {
  const int64_t c_count = p.in_channels, m_count = p.out_channels;
#pragma omp parallel for schedule(static)
  for (int64_t m = 0; m < m_count; ++m) {
    for (int64_t c = 0; c < c_count; ++c) {
      float g[3][3], t[6][3];
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) g[i][j] = w[((m * 3 + i) * 3 + j) * c_count + c];
      auto rows = [](float g0, float g1, float g2, float* r) {  // G · (g0, g1, g2)
        r[0] = g0 / 4;
        r[1] = -(g0 + g1 + g2) / 6;
        r[2] = -(g0 - g1 + g2) / 6;
        r[3] = g0 / 24 + g1 / 12 + g2 / 6;
        r[4] = g0 / 24 - g1 / 12 + g2 / 6;
        r[5] = g2;
      };
      for (int j = 0; j < 3; ++j) {
        float r[6];
        rows(g[0][j], g[1][j], g[2][j], r);
        for (int i = 0; i < 6; ++i) t[i][j] = r[i];
      }
      for (int i = 0; i < 6; ++i) {
        float r[6];
        rows(t[i][0], t[i][1], t[i][2], r);
        for (int j = 0; j < 6; ++j) u[((i * 6 + j) * c_count + c) * m_count + m] = r[j];
      }
    }
  }
}

// One run of kLanes channels from `src`, zeros past `lanes` (the last run of a channel count that is
// not a multiple of kLanes); the full run takes the branch the compiler vectorises.
inline void load_run(const float* __restrict src, int64_t lanes, float* __restrict dst) {
  if (lanes == kLanes) {
    for (int64_t l = 0; l < kLanes; ++l) dst[l] = src[l];
  } else {
    for (int64_t l = 0; l < kLanes; ++l) dst[l] = l < lanes ? src[l] : 0.0f;
  }
}

// r = Bᵀ d along one direction of a 6×6 tile of runs: element k of d is d[k·step .. k·step + kLanes),
// of r r[k·step ..] (step kLanes: a row of runs; 6·kLanes: a column).
template <int64_t kStep>
inline void apply_bt(const float* __restrict d, float* __restrict r) {
  for (int64_t v = 0; v < kLanes; ++v) {
    const float d0 = d[v], d1 = d[kStep + v], d2 = d[2 * kStep + v], d3 = d[3 * kStep + v], d4 = d[4 * kStep + v],
                d5 = d[5 * kStep + v];
    r[v] = 4 * d0 - 5 * d2 + d4;
    r[kStep + v] = -4 * d1 - 4 * d2 + d3 + d4;
    r[2 * kStep + v] = 4 * d1 - 4 * d2 - d3 + d4;
    r[3 * kStep + v] = -2 * d1 - d2 + 2 * d3 + d4;
    r[4 * kStep + v] = 2 * d1 - d2 - 2 * d3 + d4;
    r[5 * kStep + v] = 4 * d1 - 5 * d3 + d5;
  }
}

// o = Aᵀ m along one direction: six runs in, four out (strides as apply_bt's).
template <int64_t kStep>
inline void apply_at(const float* __restrict m, float* __restrict o) {
  for (int64_t v = 0; v < kLanes; ++v) {
    const float m0 = m[v], m1 = m[kStep + v], m2 = m[2 * kStep + v], m3 = m[3 * kStep + v], m4 = m[4 * kStep + v],
                m5 = m[5 * kStep + v];
    o[v] = m0 + m1 + m2 + m3 + m4;
    o[kStep + v] = m1 - m2 + 2 * m3 - 2 * m4;
    o[2 * kStep + v] = m1 + m2 + 4 * m3 + 4 * m4;
    o[3 * kStep + v] = m1 - m2 + 8 * m3 - 8 * m4 + m5;
  }
}

// Channel run `run` of tile `tile_index` of X → V[ξ][local][c0 ..): V holds `stride` tiles per point.
inline void transform_input_run(const ConvProblem& p, const float* x, int64_t tile_index, int64_t local, int64_t run,
                                int64_t stride, float* v) {
  const int64_t c_count = p.in_channels;
  const TilePosition tile = tile_position(p, tile_index);
  const int64_t c0 = run * kLanes, lanes = std::min(kLanes, c_count - c0);
  float d[6][6][kLanes];  // d[row][column]
  for (int64_t i = 0; i < 6; ++i) {
    const int64_t ih = tile.y - p.pad_top + i;
    for (int64_t j = 0; j < 6; ++j) {
      const int64_t iw = tile.x - p.pad_left + j;
      float* dst = d[i][j];
      if (ih < 0 || ih >= p.in_h || iw < 0 || iw >= p.in_w) {
        for (int64_t l = 0; l < kLanes; ++l) dst[l] = 0.0f;
        continue;
      }
      load_run(x + ((tile.n * p.in_h + ih) * p.in_w + iw) * c_count + c0, lanes, dst);
    }
  }
  float down[6][6][kLanes];  // Bᵀ d: down each column
  for (int64_t j = 0; j < 6; ++j) apply_bt<6 * kLanes>(d[0][j], down[0][j]);
  for (int64_t i = 0; i < 6; ++i) {
    float out[6][kLanes];  // (Bᵀ d B)[i][·]: along row i
    apply_bt<kLanes>(down[i][0], out[0]);
    for (int64_t j = 0; j < 6; ++j) {
      float* dst = v + ((i * 6 + j) * stride + local) * c_count + c0;
      if (lanes == kLanes) {
        for (int64_t l = 0; l < kLanes; ++l) dst[l] = out[j][l];
      } else {
        for (int64_t l = 0; l < lanes; ++l) dst[l] = out[j][l];
      }
    }
  }
}

// What the output transform applies after the GEMMs: Y = act(conv + B + z); z may be Y (each element
// is read before it is written, by the one item that writes it). bias and z are null when absent.
struct EpilogueOperands {
  const float* bias = nullptr;
  const float* z = nullptr;
  ir::ConvActivation activation;
};

// M[ξ][local][k0 ..) (M holds `stride` tiles per point) → channel run `run` of tile `tile_index` of Y,
// with the epilogue.
template <ir::ConvActivationKind kKind>
inline void transform_output_run(const ConvProblem& p, const float* m, int64_t tile_index, int64_t local, int64_t run,
                                 int64_t stride, const EpilogueOperands& e, float* y) {
  const ir::ConvActivation act{kKind, e.activation.min, e.activation.max};
  const int64_t m_count = p.out_channels;
  const TilePosition tile = tile_position(p, tile_index);
  const int64_t k0 = run * kLanes, lanes = std::min(kLanes, m_count - k0);
  float points[6][6][kLanes];  // points[i][j]: row i, column j
  for (int64_t i = 0; i < 6; ++i)
    for (int64_t j = 0; j < 6; ++j) load_run(m + ((i * 6 + j) * stride + local) * m_count + k0, lanes, points[i][j]);
  float down[4][6][kLanes];  // Aᵀ m: down each column
  for (int64_t j = 0; j < 6; ++j) apply_at<6 * kLanes>(points[0][j], down[0][j]);
  float b[kLanes] = {};
  if (e.bias != nullptr)
    for (int64_t l = 0; l < lanes; ++l) b[l] = e.bias[k0 + l];
  for (int64_t a = 0; a < 4 && tile.y + a < p.out_h; ++a) {
    const int64_t oy = tile.y + a;
    float out[4][kLanes];  // (Aᵀ m A)[a][·]: along row a
    apply_at<kLanes>(down[a][0], out[0]);
    for (int64_t col = 0; col < 4 && tile.x + col < p.out_w; ++col) {
      const int64_t at = ((tile.n * p.out_h + oy) * p.out_w + tile.x + col) * m_count + k0;
      float value[kLanes];
      for (int64_t l = 0; l < kLanes; ++l) value[l] = out[col][l] + b[l];
      if (e.z != nullptr)
        for (int64_t l = 0; l < lanes; ++l) value[l] += e.z[at + l];
      if constexpr (kKind == ir::ConvActivationKind::kSiLU || kKind == ir::ConvActivationKind::kSigmoid) {
        // Note [vector activations]: a scalar expf per element costs more than the tile's arithmetic
        if constexpr (kKind == ir::ConvActivationKind::kSiLU) silu_in_place(value, lanes);
        else sigmoid_in_place(value, lanes);
        std::copy_n(value, lanes, y + at);
      } else {
        for (int64_t l = 0; l < lanes; ++l) y[at + l] = ir::apply_conv_activation(act, value[l]);
      }
    }
  }
}

#ifdef UCUDNN_HAVE_ONEDNN
// M[ξ][r0 .. r0 + rows)[k0 .. k0 + cols) = V[ξ][r0 ..] · U[ξ][·][k0 ..] on the calling thread (oneDNN's
// sgemm runs on the calling thread inside an OpenMP region); V and M hold `stride` tiles per point. Its
// status is not read: it fails only for arguments that do not describe matrices (negative sizes,
// leading dimensions below the row length), which these never are.
inline void multiply(const ConvProblem& p, const float* v, const float* u, int64_t point, int64_t r0, int64_t rows,
                     int64_t k0, int64_t cols, int64_t stride, float* m) {
  const int64_t c_count = p.in_channels, m_count = p.out_channels;
  dnnl_sgemm('N', 'N', rows, cols, c_count, 1.0f, v + (point * stride + r0) * c_count, c_count,
             u + point * c_count * m_count + k0, m_count, 0.0f, m + (point * stride + r0) * m_count + k0, m_count);
}
#endif

// The workspace's two tile buffers (Note [Winograd chunks]): transformed input [36][capacity][C] and
// GEMM output [36][capacity][M]. Tile blocks cut them into one part per thread and use their own stride.
struct TileBuffers {
  float* v = nullptr;
  float* m = nullptr;
  int64_t capacity = 0;
};

// Note [Winograd chunks]: chunk by chunk, each in three passes over the threads.
template <ir::ConvActivationKind kKind>
void convolve_in_chunks(const ConvProblem& p, const float* x, const float* u, const EpilogueOperands& e, TileBuffers t,
                        float* y) {
  const int64_t total = tile_count(p), capacity = t.capacity;
  const int64_t runs_in = (p.in_channels + kLanes - 1) / kLanes, runs_out = (p.out_channels + kLanes - 1) / kLanes;
  const int64_t col_blocks = (p.out_channels + kGemmCols - 1) / kGemmCols;
  for (int64_t first = 0; first < total; first += capacity) {
    const int64_t tiles = std::min(capacity, total - first), row_blocks = (tiles + kGemmRows - 1) / kGemmRows;
#pragma omp parallel for schedule(static)
    for (int64_t item = 0; item < tiles * runs_in; ++item)
      transform_input_run(p, x, first + item / runs_in, item / runs_in, item % runs_in, capacity, t.v);
#ifdef UCUDNN_HAVE_ONEDNN
#pragma omp parallel for collapse(3) schedule(dynamic, 1)
    for (int64_t point = 0; point < kPoints; ++point)
      for (int64_t rb = 0; rb < row_blocks; ++rb)
        for (int64_t cb = 0; cb < col_blocks; ++cb) {
          const int64_t r0 = rb * kGemmRows, k0 = cb * kGemmCols;
          multiply(p, t.v, u, point, r0, std::min(kGemmRows, tiles - r0), k0, std::min(kGemmCols, p.out_channels - k0),
                   capacity, t.m);
        }
#endif
#pragma omp parallel for schedule(static)
    for (int64_t item = 0; item < tiles * runs_out; ++item)
      transform_output_run<kKind>(p, t.m, first + item / runs_out, item / runs_out, item % runs_out, capacity, e, y);
  }
}

// Note [Winograd tile blocks]: each thread takes blocks of `block` tiles through all three passes
// in its own part of the tile buffers.
template <ir::ConvActivationKind kKind>
void convolve_in_blocks(const ConvProblem& p, const float* x, const float* u, const EpilogueOperands& e, TileBuffers t,
                        int threads, int64_t block, float* y) {
  const int64_t total = tile_count(p), blocks = (total + block - 1) / block;
  const int64_t runs_in = (p.in_channels + kLanes - 1) / kLanes, runs_out = (p.out_channels + kLanes - 1) / kLanes;
#pragma omp parallel num_threads(threads)
  {
    // At most `threads` members (one, nested in another parallel region): each part lies in the buffers.
    const int64_t thread = omp_get_thread_num();
    float* v = t.v + thread * kPoints * block * p.in_channels;
    float* m = t.m + thread * kPoints * block * p.out_channels;
#pragma omp for schedule(dynamic, 1)
    for (int64_t b = 0; b < blocks; ++b) {
      const int64_t first = b * block, tiles = std::min(block, total - first);
      for (int64_t item = 0; item < tiles * runs_in; ++item)
        transform_input_run(p, x, first + item / runs_in, item / runs_in, item % runs_in, block, v);
#ifdef UCUDNN_HAVE_ONEDNN
      for (int64_t point = 0; point < kPoints; ++point) multiply(p, v, u, point, 0, tiles, 0, p.out_channels, block, m);
#endif
      for (int64_t item = 0; item < tiles * runs_out; ++item)
        transform_output_run<kKind>(p, m, first + item / runs_out, item / runs_out, item % runs_out, block, e, y);
    }
  }
}

template <ir::ConvActivationKind kKind>
void convolve_with(const ConvProblem& p, const float* x, const float* u, const EpilogueOperands& e, TileBuffers t,
                   float* y) {
  const int threads = omp_get_max_threads();
  const int64_t block = tiles_per_block(p, threads);
  if (block > 0) convolve_in_blocks<kKind>(p, x, u, e, t, threads, block, y);
  else convolve_in_chunks<kKind>(p, x, u, e, t, y);
}

// The convolution with the epilogue's activation compiled in.
void convolve(const ConvProblem& p, const float* x, const float* u, const EpilogueOperands& e, TileBuffers t,
              float* y) {
  using Kind = ir::ConvActivationKind;
  switch (e.activation.kind) {
    case Kind::kIdentity: return convolve_with<Kind::kIdentity>(p, x, u, e, t, y);
    case Kind::kRelu: return convolve_with<Kind::kRelu>(p, x, u, e, t, y);
    case Kind::kSiLU: return convolve_with<Kind::kSiLU>(p, x, u, e, t, y);
    case Kind::kHardSwish: return convolve_with<Kind::kHardSwish>(p, x, u, e, t, y);
    case Kind::kSigmoid: return convolve_with<Kind::kSigmoid>(p, x, u, e, t, y);
    case Kind::kClip: return convolve_with<Kind::kClip>(p, x, u, e, t, y);
    default: assert(false && "ir::conv_activation gives no other kind"); break;
  }
}

// The transformed filters of constant weights, one copy per W values and shape (Note [shared converted
// weights]).
std::shared_ptr<std::vector<float>> shared_filters(const ConvProblem& p, const float* w) {
  static SharedWeights<std::pair<int64_t, int64_t>, std::vector<float>> registry;  // (C, M)
  auto convert = [&] {
    auto filters = std::make_shared<std::vector<float>>(static_cast<size_t>(kPoints * p.in_channels * p.out_channels));
    transform_weights(p, w, filters->data());
    return filters;
  };
  auto same = [](const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
  };
  return registry.get({p.in_channels, p.out_channels}, w, static_cast<size_t>(p.out_channels * 9 * p.in_channels),
                      convert, same);
}

class WinogradConv final : public PreparedConv {
 public:
  WinogradConv(const ConvProblem& p, const ConvEpilogue& epilogue, bool weights_constant)
      : p_(p), epilogue_(epilogue), constant_(weights_constant), layout_(workspace_layout(p, !weights_constant)) {}

  size_t workspace_bytes() const override { return layout_.total; }
  runtime::KeptBuffer kept() const override {
    return filters_ ? runtime::KeptBuffer{filters_.get(), filters_->size() * sizeof(float)} : runtime::KeptBuffer{};
  }
  bool adds_residual_in_place() const override { return true; }

  void run(const float* x, const float* w, const float* bias, const float* z, float* y, void* workspace) override {
    if (p_.batch == 0) return;
    char* ws = static_cast<char*>(workspace);
    float* v = reinterpret_cast<float*>(ws);
    float* m = reinterpret_cast<float*>(ws + layout_.products_offset);
    const float* u = nullptr;
    if (!constant_) {  // Note [Winograd weights]: W may change between runs
      float* filters = reinterpret_cast<float*>(ws + layout_.weights_offset);
      transform_weights(p_, w, filters);
      u = filters;
    } else {
      if (filters_ == nullptr || filters_from_ != w) {
        filters_ = shared_filters(p_, w);
        filters_from_ = w;
      }
      u = filters_->data();
    }
    const EpilogueOperands e{epilogue_.bias ? bias : nullptr, epilogue_.residual ? z : nullptr, epilogue_.activation};
    convolve(p_, x, u, e, TileBuffers{v, m, chunk_capacity(p_)}, y);
  }

 private:
  ConvProblem p_;
  ConvEpilogue epilogue_;
  bool constant_;
  WorkspaceLayout layout_;
  std::shared_ptr<std::vector<float>> filters_;  // U when W is constant (Note [Winograd weights])
  const float* filters_from_ = nullptr;                 // the W pointer filters_ was transformed from
};

}  // namespace

bool applies(const ConvProblem& p) {
#ifndef UCUDNN_HAVE_ONEDNN
  (void)p;
  return false;
#else
  if (!p.channels_last || p.group != 1 || p.kernel_h != 3 || p.kernel_w != 3 || p.stride_h != 1 || p.stride_w != 1 ||
      p.dilation_h != 1 || p.dilation_w != 1 || p.out_h < 1 || p.out_w < 1 || p.in_channels < 1 || p.out_channels < 1)
    return false;
  ConvProblem one = p;
  one.batch = std::max<int64_t>(p.batch, 1);
  return workspace_layout(one, true).total <= kMaxTensorBytes;
#endif
}

size_t workspace_bytes(const ConvProblem& p) {
  if (!applies(p)) return std::numeric_limits<size_t>::max();
  return p.batch == 0 ? 0 : workspace_layout(p, true).total;
}

std::unique_ptr<PreparedConv> prepare(const ConvProblem& p, const ConvEpilogue& epilogue, bool weights_constant) {
  if (!applies(p)) return nullptr;
  return std::make_unique<WinogradConv>(p, epilogue, weights_constant);
}

}  // namespace ucudnn::cpu::winograd
