// The CPU convolution algorithms (see conv_algorithms.h for the trade-offs).
//
// Stages of the GEMM algorithms: im2col (threads over rows of the column matrix),
// Eigen GEMMs (Eigen threads them itself; never called inside our own parallel
// region), then a bias pass or a scatter (threads over output planes).
#include "runtime/cpu/conv_algorithms.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <limits>

// Note [GCC 12 AVX-512 false positive]: with -march=native on AVX-512 machines GCC 12
// reports -Wmaybe-uninitialized inside its own avx512fintrin.h when Eigen's GEMM
// kernels are inlined (GCC bug 105593). Silenced for this file only.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <Eigen/Core>

#include "runtime/core/bytes.h"
#include "runtime/cpu/onednn_conv.h"
#include "runtime/cpu/vector_activations.h"
#include "runtime/cpu/winograd_conv.h"
#include "runtime/ir/layout.h"

namespace ucudnn::cpu {

namespace {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// c[m, n] = a[m, k] · b[k, n] (c += with `accumulate`), row-major, leading dimensions = column counts.
void gemm(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k, bool accumulate = false) {
  Eigen::Map<const RowMatrix> lhs(a, m, k);
  Eigen::Map<const RowMatrix> rhs(b, k, n);
  Eigen::Map<RowMatrix> out(c, m, n);
  if (accumulate)
    out.noalias() += lhs * rhs;
  else
    out.noalias() = lhs * rhs;
}

// The output columns [lo, hi) whose input column iw0 + ow * stride lies in [0, width).
void valid_range(int64_t iw0, int64_t stride, int64_t width, int64_t out_w, int64_t* lo, int64_t* hi) {
  *lo = iw0 >= 0 ? 0 : (-iw0 + stride - 1) / stride;
  *hi = iw0 >= width ? 0 : std::min(out_w, (width - 1 - iw0) / stride + 1);
  *lo = std::min(*lo, out_w);
  if (*hi < *lo) *hi = *lo;
}

// Row (kh, kw) of one input plane's im2col: dst[oh * OW + ow] = plane[ih, iw] or 0.
void im2col_row(const ConvProblem& p, const float* plane, int64_t kh, int64_t kw, float* dst) {
  const int64_t iw0 = kw * p.dilation_w - p.pad_left;
  int64_t lo, hi;
  valid_range(iw0, p.stride_w, p.in_w, p.out_w, &lo, &hi);
  for (int64_t oh = 0; oh < p.out_h; ++oh) {
    float* d = dst + oh * p.out_w;
    const int64_t ih = oh * p.stride_h - p.pad_top + kh * p.dilation_h;
    if (ih < 0 || ih >= p.in_h || lo == hi) {
      std::fill(d, d + p.out_w, 0.0f);
      continue;
    }
    std::fill(d, d + lo, 0.0f);
    const float* s = plane + ih * p.in_w + iw0 + lo * p.stride_w;
    if (p.stride_w == 1) {
      std::memcpy(d + lo, s, static_cast<size_t>(hi - lo) * sizeof(float));
    } else {
      for (int64_t ow = lo; ow < hi; ++ow) d[ow] = s[(ow - lo) * p.stride_w];
    }
    std::fill(d + hi, d + p.out_w, 0.0f);
  }
}

// The adjoint of im2col_row: plane[ih, iw] += src[oh * OW + ow] over the positions inside the plane.
void col2im_row(const ConvProblem& p, const float* src, int64_t kh, int64_t kw, float* plane) {
  const int64_t iw0 = kw * p.dilation_w - p.pad_left;
  int64_t lo, hi;
  valid_range(iw0, p.stride_w, p.in_w, p.out_w, &lo, &hi);
  if (lo == hi) return;
  for (int64_t oh = 0; oh < p.out_h; ++oh) {
    const int64_t ih = oh * p.stride_h - p.pad_top + kh * p.dilation_h;
    if (ih < 0 || ih >= p.in_h) continue;
    const float* s = src + oh * p.out_w;
    float* d = plane + ih * p.in_w + iw0;
    if (p.stride_w == 1) {
      for (int64_t ow = lo; ow < hi; ++ow) d[ow] += s[ow];
    } else {
      for (int64_t ow = lo; ow < hi; ++ow) d[ow * p.stride_w] += s[ow];
    }
  }
}

// y[n, m, :] += bias[m] for every plane.
void add_bias(const ConvProblem& p, const float* bias, float* y) {
  if (bias == nullptr) return;
  const int64_t planes = p.batch * p.out_channels, size = p.out_plane();
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < planes; ++i) {
    const float b = bias[i % p.out_channels];
    float* d = y + i * size;
    for (int64_t j = 0; j < size; ++j) d[j] += b;
  }
}

// The algorithms below write Y = conv + bias, or with `accumulate` add it to what Y holds (Note
// [residual in place]).
void run_im2col_batched(const ConvProblem& p, const float* x, const float* w, const float* bias, float* y,
                        float* workspace, bool accumulate) {
  const int64_t k = p.patch_size(), mg = p.filters_per_group(), plane = p.out_plane();
  const int64_t columns = p.batch * plane;
  float* col = workspace;
  im2col(p, x, p.batch, col);
  float* out = p.batch == 1 ? y : col + p.in_channels * p.kernel_h * p.kernel_w * columns;
  for (int64_t g = 0; g < p.group; ++g)
    gemm(w + g * mg * k, col + g * k * columns, out + g * mg * columns, mg, columns, k, accumulate && p.batch == 1);
  if (p.batch == 1) {
    add_bias(p, bias, y);
    return;
  }
  // Scatter [M, N·P] to [N, M, P], adding the bias on the way.
  const int64_t planes = p.batch * p.out_channels;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < planes; ++i) {
    const int64_t n = i / p.out_channels, m = i % p.out_channels;
    const float b = bias ? bias[m] : 0.0f;
    const float* s = out + m * columns + n * plane;
    float* d = y + i * plane;
    if (accumulate) {
      for (int64_t j = 0; j < plane; ++j) d[j] += s[j] + b;
    } else {
      for (int64_t j = 0; j < plane; ++j) d[j] = s[j] + b;
    }
  }
}

void run_im2col_per_sample(const ConvProblem& p, const float* x, const float* w, const float* bias, float* y,
                           float* col, bool accumulate) {
  const int64_t k = p.patch_size(), mg = p.filters_per_group(), plane = p.out_plane();
  const int64_t in_sample = p.in_channels * p.in_h * p.in_w, out_sample = p.out_channels * plane;
  for (int64_t n = 0; n < p.batch; ++n) {
    im2col(p, x + n * in_sample, 1, col);
    for (int64_t g = 0; g < p.group; ++g)
      gemm(w + g * mg * k, col + g * k * plane, y + n * out_sample + g * mg * plane, mg, plane, k, accumulate);
  }
  add_bias(p, bias, y);
}

void run_gemm_1x1(const ConvProblem& p, const float* x, const float* w, const float* bias, float* y, bool accumulate) {
  const int64_t cg = p.channels_per_group(), mg = p.filters_per_group(), plane = p.out_plane();
  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t g = 0; g < p.group; ++g)
      gemm(w + g * mg * cg, x + (n * p.in_channels + g * cg) * plane, y + (n * p.out_channels + g * mg) * plane, mg,
           plane, cg, accumulate);
  add_bias(p, bias, y);
}

void run_direct(const ConvProblem& p, const float* x, const float* w, const float* bias, float* y, bool accumulate) {
  const int64_t cg = p.channels_per_group(), mg = p.filters_per_group(), plane = p.out_plane();
  const int64_t in_plane = p.in_h * p.in_w, taps = p.kernel_h * p.kernel_w;
  const int64_t planes = p.batch * p.out_channels;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < planes; ++i) {
    const int64_t n = i / p.out_channels, m = i % p.out_channels, g = m / mg;
    float* out = y + i * plane;
    const float b = bias ? bias[m] : 0.0f;
    if (accumulate) {
      for (int64_t j = 0; j < plane; ++j) out[j] += b;
    } else {
      std::fill(out, out + plane, b);
    }
    for (int64_t c = 0; c < cg; ++c) {
      const float* src = x + (n * p.in_channels + g * cg + c) * in_plane;
      const float* filter = w + (m * cg + c) * taps;
      for (int64_t kh = 0; kh < p.kernel_h; ++kh) {
        for (int64_t kw = 0; kw < p.kernel_w; ++kw) {
          const float weight = filter[kh * p.kernel_w + kw];
          const int64_t iw0 = kw * p.dilation_w - p.pad_left;
          int64_t lo, hi;
          valid_range(iw0, p.stride_w, p.in_w, p.out_w, &lo, &hi);
          for (int64_t oh = 0; oh < p.out_h; ++oh) {
            const int64_t ih = oh * p.stride_h - p.pad_top + kh * p.dilation_h;
            if (ih < 0 || ih >= p.in_h) continue;
            const float* s = src + ih * p.in_w + iw0;
            float* d = out + oh * p.out_w;
            if (p.stride_w == 1) {
              for (int64_t ow = lo; ow < hi; ++ow) d[ow] += weight * s[ow];
            } else {
              for (int64_t ow = lo; ow < hi; ++ow) d[ow] += weight * s[ow * p.stride_w];
            }
          }
        }
      }
    }
  }
}

// One of the Eigen and loop algorithms (Y = conv + bias; with `accumulate` Y += conv + bias).
void run_eigen_algorithm(const ConvProblem& p, int algorithm, const float* x, const float* w, const float* bias,
                         float* y, float* workspace, bool accumulate) {
  switch (static_cast<CpuConvAlgorithm>(algorithm)) {
    case CpuConvAlgorithm::kIm2colGemm: run_im2col_batched(p, x, w, bias, y, workspace, accumulate); break;
    case CpuConvAlgorithm::kDirect: run_direct(p, x, w, bias, y, accumulate); break;
    case CpuConvAlgorithm::kGemm1x1: run_gemm_1x1(p, x, w, bias, y, accumulate); break;
    case CpuConvAlgorithm::kIm2colGemmPerSample: run_im2col_per_sample(p, x, w, bias, y, workspace, accumulate); break;
    default: break;  // the oneDNN algorithms: never here (prepare_conv makes them an OnednnConv)
  }
}

onednn::Kind onednn_kind(int algorithm) {
  switch (static_cast<CpuConvAlgorithm>(algorithm)) {
    case CpuConvAlgorithm::kOnednnWinograd: return onednn::Kind::kWinograd;
    case CpuConvAlgorithm::kOnednnAuto: return onednn::Kind::kAuto;
    case CpuConvAlgorithm::kOnednnPlain: return onednn::Kind::kDirectPlain;
    default: return onednn::Kind::kDirect;
  }
}

// The Eigen and loop algorithms: nothing to make once; the bias joins in the algorithm's own
// pass, z and the activation in one pass after (z none when it lies in Y already: they accumulate).
class EigenConv final : public PreparedConv {
 public:
  EigenConv(const ConvProblem& p, int algorithm, const ConvEpilogue& epilogue)
      : p_(p), algorithm_(algorithm), epilogue_(epilogue) {}
  size_t workspace_bytes() const override { return conv_workspace_bytes(p_, algorithm_); }
  void run(const float* x, const float* w, const float* bias, const float* z, float* y, void* workspace) override {
    if (p_.batch == 0) return;
    const bool in_place = epilogue_.residual && z == y;  // Note [residual in place]: Y holds z
    run_eigen_algorithm(p_, algorithm_, x, w, epilogue_.bias ? bias : nullptr, y, static_cast<float*>(workspace),
                        in_place);
    apply_conv_epilogue(p_, nullptr, epilogue_.residual && !in_place ? z : nullptr, epilogue_.activation, y);
  }
  bool adds_residual_in_place() const override { return true; }

 private:
  ConvProblem p_;
  int algorithm_;
  ConvEpilogue epilogue_;
};

}  // namespace

void im2col(const ConvProblem& p, const float* x, int64_t samples, float* col) {
  const int64_t taps = p.kernel_h * p.kernel_w, rows = p.in_channels * taps, plane = p.out_plane();
  const int64_t ld = samples * plane, in_plane = p.in_h * p.in_w;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < rows * samples; ++i) {
    const int64_t r = i / samples, n = i % samples;
    const int64_t c = r / taps, kh = (r % taps) / p.kernel_w, kw = r % p.kernel_w;
    im2col_row(p, x + (n * p.in_channels + c) * in_plane, kh, kw, col + r * ld + n * plane);
  }
}

// Threads over input planes (n, c): each sums the R·S rows of its channel, so no two threads
// write one element.
void col2im(const ConvProblem& p, const float* col, int64_t samples, float* x) {
  const int64_t taps = p.kernel_h * p.kernel_w, plane = p.out_plane();
  const int64_t ld = samples * plane, in_plane = p.in_h * p.in_w;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < samples * p.in_channels; ++i) {
    const int64_t n = i / p.in_channels, c = i % p.in_channels;
    float* dst = x + i * in_plane;
    std::fill(dst, dst + in_plane, 0.0f);
    for (int64_t t = 0; t < taps; ++t)
      col2im_row(p, col + (c * taps + t) * ld + n * plane, t / p.kernel_w, t % p.kernel_w, dst);
  }
}

const char* cpu_conv_algorithm_name(int algorithm) {
  static const char* const kNames[kNumCpuConvAlgorithms] = {
      "im2col_gemm",   "direct",          "gemm_1x1",    "im2col_gemm_per_sample",
      "onednn_direct", "onednn_winograd", "onednn_auto", "onednn_plain", "winograd_4x3"};
  return algorithm >= 0 && algorithm < kNumCpuConvAlgorithms ? kNames[algorithm] : "?";
}

bool is_onednn_algorithm(int algorithm) {
  return algorithm >= static_cast<int>(CpuConvAlgorithm::kOnednnDirect) &&
         algorithm <= static_cast<int>(CpuConvAlgorithm::kOnednnPlain);
}

bool cpu_conv_algorithm_available(int algorithm) {
  // oneDNN's Winograd (and its auto, which may pick it) trades precision for speed: ResNet-18 training
  // drifted past PyTorch's FP32 reference when the benchmark chose it, so they are never offered; their
  // ids stay, refused as an algorithm of a build without oneDNN is. Our own kWinograd4x3 is offered
  // for inference only (Note [Winograd for inference], optimizer/bench/cpu_benchmarker.cc).
  if (algorithm == static_cast<int>(CpuConvAlgorithm::kOnednnWinograd) ||
      algorithm == static_cast<int>(CpuConvAlgorithm::kOnednnAuto))
    return false;
  if (is_onednn_algorithm(algorithm) || algorithm == static_cast<int>(CpuConvAlgorithm::kWinograd4x3))
    return onednn::built_in();  // Winograd's GEMMs are oneDNN's
  return algorithm >= 0 && algorithm < kNumCpuConvAlgorithms;
}

bool cpu_runs_channels_last() { return cpu_conv_algorithm_available(static_cast<int>(CpuConvAlgorithm::kOnednnPlain)); }

bool conv_algorithm_applies(const ConvProblem& p, int algorithm) {
  const bool winograd = algorithm == static_cast<int>(CpuConvAlgorithm::kWinograd4x3);
  if (p.channels_last && !is_onednn_algorithm(algorithm) && !winograd) return false;  // the Eigen ones are NCHW
  switch (algorithm) {
    case static_cast<int>(CpuConvAlgorithm::kIm2colGemm):
    case static_cast<int>(CpuConvAlgorithm::kDirect):
    case static_cast<int>(CpuConvAlgorithm::kIm2colGemmPerSample):
      return true;
    case static_cast<int>(CpuConvAlgorithm::kGemm1x1):
      return p.kernel_h == 1 && p.kernel_w == 1 && p.stride_h == 1 && p.stride_w == 1 && p.pad_top == 0 &&
             p.pad_left == 0 && p.out_h == p.in_h && p.out_w == p.in_w;
    case static_cast<int>(CpuConvAlgorithm::kOnednnDirect):
    case static_cast<int>(CpuConvAlgorithm::kOnednnWinograd):
    case static_cast<int>(CpuConvAlgorithm::kOnednnAuto):
    case static_cast<int>(CpuConvAlgorithm::kOnednnPlain):
      return cpu_conv_algorithm_available(algorithm) && onednn::applies(p, onednn_kind(algorithm));
    case static_cast<int>(CpuConvAlgorithm::kWinograd4x3):
      return winograd::applies(p);
    default:
      return false;
  }
}

// Measured on 2 Xeon cores (ResNet-50 layers): the whole-batch GEMM wins when the
// output plane is small (per-sample GEMMs are thin), loses to the im2col/scatter
// traffic when it is large.
int conv_default_algorithm(const ConvProblem& p) {
  if (p.channels_last) return static_cast<int>(CpuConvAlgorithm::kOnednnPlain);  // the only ones there (header)
  if (p.channels_per_group() == 1) return static_cast<int>(CpuConvAlgorithm::kDirect);
  if (p.batch > 1 && p.out_plane() <= kSmallOutputPlane &&
      conv_workspace_bytes(p, static_cast<int>(CpuConvAlgorithm::kIm2colGemm)) <= kDefaultWorkspaceLimit)
    return static_cast<int>(CpuConvAlgorithm::kIm2colGemm);
  if (conv_algorithm_applies(p, static_cast<int>(CpuConvAlgorithm::kGemm1x1)))
    return static_cast<int>(CpuConvAlgorithm::kGemm1x1);
  // One sample's im2col so large that its size does not even fit (SIZE_MAX): direct needs none.
  if (conv_workspace_bytes(p, static_cast<int>(CpuConvAlgorithm::kIm2colGemmPerSample)) == SIZE_MAX)
    return static_cast<int>(CpuConvAlgorithm::kDirect);
  return static_cast<int>(CpuConvAlgorithm::kIm2colGemmPerSample);
}

size_t conv_workspace_bytes(const ConvProblem& p, int algorithm) {
  if (algorithm == kDefaultCpuConvAlgorithm) algorithm = conv_default_algorithm(p);
  if (!conv_algorithm_applies(p, algorithm)) return std::numeric_limits<size_t>::max();
  if (is_onednn_algorithm(algorithm)) return onednn::workspace_bytes(p, onednn_kind(algorithm));
  if (algorithm == static_cast<int>(CpuConvAlgorithm::kWinograd4x3)) return winograd::workspace_bytes(p);
  // X, W and Y each fit (check_value_sizes), but the column matrix multiplies dims of X and W:
  // saturating, so a size past size_t is SIZE_MAX, which no workspace holds. Beyond
  // kMaxTensorBytes the kernels' int64 indexing into it would overflow: also SIZE_MAX.
  auto mul = [](size_t a, size_t b) { return saturating_mul(a, b); };
  auto count = [](int64_t dim) { return static_cast<size_t>(dim); };  // dims are >= 0
  const size_t rows = mul(mul(count(p.in_channels), count(p.kernel_h)), count(p.kernel_w));
  const size_t plane = mul(count(p.out_h), count(p.out_w));
  size_t floats = 0;
  switch (static_cast<CpuConvAlgorithm>(algorithm)) {
    case CpuConvAlgorithm::kIm2colGemm:
      floats = saturating_add(mul(mul(rows, count(p.batch)), plane),
                              p.batch > 1 ? mul(mul(count(p.batch), count(p.out_channels)), plane) : 0);
      break;
    case CpuConvAlgorithm::kIm2colGemmPerSample:
      floats = mul(rows, plane);
      break;
    case CpuConvAlgorithm::kDirect:
    case CpuConvAlgorithm::kGemm1x1:
      floats = 0;
      break;
    case CpuConvAlgorithm::kOnednnDirect:  // answered above
    case CpuConvAlgorithm::kOnednnWinograd:
    case CpuConvAlgorithm::kOnednnAuto:
    case CpuConvAlgorithm::kOnednnPlain:
    case CpuConvAlgorithm::kWinograd4x3:
      floats = 0;
      break;
  }
  const size_t bytes = saturating_mul(floats, sizeof(float));
  return bytes > kMaxTensorBytes ? std::numeric_limits<size_t>::max() : bytes;
}

namespace {

// apply_conv_epilogue for one activation kind, known at compile time so the loops vectorise
// (ir::apply_conv_activation inlined with the switch folded away). SiLU and
// sigmoid run over whole spans after the sums, through vector_activations (Note [vector activations]):
// a scalar expf per element cost more than the convolution.
template <ir::ConvActivationKind kKind>
void epilogue_pass(const ConvProblem& p, const float* bias, const float* z, const ir::ConvActivation& activation,
                   float* y) {
  using Kind = ir::ConvActivationKind;
  constexpr bool kSpans = kKind == Kind::kSiLU || kKind == Kind::kSigmoid;
  const ir::ConvActivation act{kKind, activation.min, activation.max};
  auto apply = [&](float v) {
    if constexpr (kSpans) return v;
    return ir::apply_conv_activation(act, v);
  };
  const bool sums = bias != nullptr || z != nullptr || !kSpans;
  auto finish = [](float* d, int64_t n) {
    if constexpr (kKind == Kind::kSiLU) silu_in_place(d, n);
    if constexpr (kKind == Kind::kSigmoid) sigmoid_in_place(d, n);
  };
  if (p.channels_last) {  // rows of M channels; a task takes whole rows, kSpanFloats of them or one row
    const int64_t rows = p.batch * p.out_plane(), m = p.out_channels;
    constexpr int64_t kSpanFloats = 4096;
    const int64_t per_task = std::max<int64_t>(1, kSpanFloats / std::max<int64_t>(m, 1));
#pragma omp parallel for schedule(static)
    for (int64_t first = 0; first < rows; first += per_task) {
      const int64_t last = std::min(rows, first + per_task);
      if (sums)
        for (int64_t r = first; r < last; ++r) {
          float* d = y + r * m;
          const float* add = z ? z + r * m : nullptr;
          for (int64_t j = 0; j < m; ++j) d[j] = apply(d[j] + (bias ? bias[j] : 0.0f) + (add ? add[j] : 0.0f));
        }
      finish(y + first * m, (last - first) * m);
    }
    return;
  }
  const int64_t planes = p.batch * p.out_channels, size = p.out_plane();
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < planes; ++i) {
    const float b = bias ? bias[i % p.out_channels] : 0.0f;
    float* d = y + i * size;
    const float* add = z ? z + i * size : nullptr;
    if (sums)
      for (int64_t j = 0; j < size; ++j) d[j] = apply(d[j] + b + (add ? add[j] : 0.0f));
    finish(d, size);
  }
}

}  // namespace

void apply_conv_epilogue(const ConvProblem& p, const float* bias, const float* z, const ir::ConvActivation& activation,
                         float* y) {
  using Kind = ir::ConvActivationKind;
  switch (activation.kind) {
    case Kind::kIdentity:
      if (bias != nullptr || z != nullptr) epilogue_pass<Kind::kIdentity>(p, bias, z, activation, y);
      return;
    case Kind::kRelu: return epilogue_pass<Kind::kRelu>(p, bias, z, activation, y);
    case Kind::kSiLU: return epilogue_pass<Kind::kSiLU>(p, bias, z, activation, y);
    case Kind::kHardSwish: return epilogue_pass<Kind::kHardSwish>(p, bias, z, activation, y);
    case Kind::kSigmoid: return epilogue_pass<Kind::kSigmoid>(p, bias, z, activation, y);
    case Kind::kClip: return epilogue_pass<Kind::kClip>(p, bias, z, activation, y);
    default: assert(false && "ir::conv_activation gives no other kind"); break;
  }
}

std::unique_ptr<PreparedConv> prepare_conv(const ConvProblem& p, int algorithm, const ConvEpilogue& epilogue,
                                           bool weights_constant) {
  if (!conv_algorithm_applies(p, algorithm)) return nullptr;
  if (is_onednn_algorithm(algorithm)) return onednn::prepare(p, onednn_kind(algorithm), epilogue, weights_constant);
  if (algorithm == static_cast<int>(CpuConvAlgorithm::kWinograd4x3))
    return winograd::prepare(p, epilogue, weights_constant);
  return std::make_unique<EigenConv>(p, algorithm, epilogue);
}

}  // namespace ucudnn::cpu
