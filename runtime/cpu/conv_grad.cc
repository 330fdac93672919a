// CPU kernels of ConvGradData and ConvGradFilter (see conv_grad.h for the algorithms).
//
// Stages: dY gathered to [K, N·P] (threads over planes), Eigen GEMMs (Eigen threads them itself;
// never called inside our own parallel region), then col2im (data) — im2col and col2im are the
// forward's (conv_algorithms.h). N comes from the shapes of this call (a micro-batch), never the node.
#include "runtime/cpu/conv_grad.h"

#include <algorithm>
#include <cstring>
#include <limits>

// Note [GCC 12 AVX-512 false positive] (conv_algorithms.cc).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <Eigen/Core>

#include "runtime/core/bytes.h"
#include "runtime/cpu/cpu_kernel.h"
#include "runtime/ir/layout.h"

namespace ucudnn::cpu {

namespace {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Map = Eigen::Map<RowMatrix, Eigen::Unaligned, Eigen::OuterStride<>>;
using ConstMap = Eigen::Map<const RowMatrix, Eigen::Unaligned, Eigen::OuterStride<>>;

// A rows × cols row-major block with leading dimension ld.
ConstMap view(const float* data, int64_t rows, int64_t cols, int64_t ld) {
  return ConstMap(data, rows, cols, Eigen::OuterStride<>(ld));
}
Map view(float* data, int64_t rows, int64_t cols, int64_t ld) { return Map(data, rows, cols, Eigen::OuterStride<>(ld)); }

constexpr int kGemm = static_cast<int>(CpuConvGradAlgorithm::kGemm);
constexpr int kGemmPerSample = static_cast<int>(CpuConvGradAlgorithm::kGemmPerSample);
constexpr int kGemm1x1 = static_cast<int>(CpuConvGradAlgorithm::kGemm1x1);

// [N, K, P] → [K, N·P]: dY's planes side by side, so one GEMM covers every sample.
void gather_planes(const ConvProblem& p, const float* dy, float* dst) {
  const int64_t plane = p.out_plane(), planes = p.batch * p.out_channels, columns = p.batch * plane;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < planes; ++i) {
    const int64_t n = i / p.out_channels, m = i % p.out_channels;
    std::memcpy(dst + m * columns + n * plane, dy + i * plane, static_cast<size_t>(plane) * sizeof(float));
  }
}

// --- ConvGradData: dX = col2im(Wᵀ · dY) ---

void data_gemm(const ConvProblem& p, const float* dy, const float* w, float* dx, float* workspace) {
  const int64_t k = p.patch_size(), mg = p.filters_per_group(), columns = p.batch * p.out_plane();
  float* col = workspace;
  const float* dys = dy;
  if (p.batch > 1) {
    float* gathered = col + p.group * k * columns;
    gather_planes(p, dy, gathered);
    dys = gathered;
  }
  for (int64_t g = 0; g < p.group; ++g)
    view(col + g * k * columns, k, columns, columns).noalias() =
        view(w + g * mg * k, mg, k, k).transpose() * view(dys + g * mg * columns, mg, columns, columns);
  col2im(p, col, p.batch, dx);
}

void data_gemm_per_sample(const ConvProblem& p, const float* dy, const float* w, float* dx, float* col) {
  const int64_t k = p.patch_size(), mg = p.filters_per_group(), plane = p.out_plane();
  const int64_t in_sample = p.in_channels * p.in_h * p.in_w, out_sample = p.out_channels * plane;
  for (int64_t n = 0; n < p.batch; ++n) {
    for (int64_t g = 0; g < p.group; ++g)
      view(col + g * k * plane, k, plane, plane).noalias() =
          view(w + g * mg * k, mg, k, k).transpose() * view(dy + n * out_sample + g * mg * plane, mg, plane, plane);
    col2im(p, col, 1, dx + n * in_sample);
  }
}

void data_gemm_1x1(const ConvProblem& p, const float* dy, const float* w, float* dx) {
  const int64_t cg = p.channels_per_group(), mg = p.filters_per_group(), plane = p.out_plane();
  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t g = 0; g < p.group; ++g)
      view(dx + (n * p.in_channels + g * cg) * plane, cg, plane, plane).noalias() =
          view(w + g * mg * cg, mg, cg, cg).transpose() *
          view(dy + (n * p.out_channels + g * mg) * plane, mg, plane, plane);
}

// --- ConvGradFilter: dW (+)= dY · im2col(X)ᵀ ---

void filter_gemm(const ConvProblem& p, const float* x, const float* dy, float* dw, bool accumulate,
                 float* workspace) {
  const int64_t k = p.patch_size(), mg = p.filters_per_group(), columns = p.batch * p.out_plane();
  float* col = workspace;
  im2col(p, x, p.batch, col);
  const float* dys = dy;
  if (p.batch > 1) {
    float* gathered = col + p.group * k * columns;
    gather_planes(p, dy, gathered);
    dys = gathered;
  }
  for (int64_t g = 0; g < p.group; ++g) {
    auto out = view(dw + g * mg * k, mg, k, k);
    auto product = view(dys + g * mg * columns, mg, columns, columns) *
                   view(col + g * k * columns, k, columns, columns).transpose();
    if (accumulate) out.noalias() += product;
    else out.noalias() = product;
  }
}

void filter_gemm_per_sample(const ConvProblem& p, const float* x, const float* dy, float* dw, float* col) {
  const int64_t k = p.patch_size(), mg = p.filters_per_group(), plane = p.out_plane();
  const int64_t in_sample = p.in_channels * p.in_h * p.in_w, out_sample = p.out_channels * plane;
  for (int64_t n = 0; n < p.batch; ++n) {
    im2col(p, x + n * in_sample, 1, col);
    for (int64_t g = 0; g < p.group; ++g)
      view(dw + g * mg * k, mg, k, k).noalias() += view(dy + n * out_sample + g * mg * plane, mg, plane, plane) *
                                                   view(col + g * k * plane, k, plane, plane).transpose();
  }
}

void filter_gemm_1x1(const ConvProblem& p, const float* x, const float* dy, float* dw) {
  const int64_t cg = p.channels_per_group(), mg = p.filters_per_group(), plane = p.out_plane();
  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t g = 0; g < p.group; ++g)
      view(dw + g * mg * cg, mg, cg, cg).noalias() +=
          view(dy + (n * p.out_channels + g * mg) * plane, mg, plane, plane) *
          view(x + (n * p.in_channels + g * cg) * plane, cg, plane, plane).transpose();
}

// --- the kernels ---

// The kernels' workspace query (both directions need the same scratch).
size_t workspace_of(const ir::Node& node, const std::vector<Shape>& src_shapes, int algorithm) {
  auto problem = conv_grad_problem(node, src_shapes);
  if (!problem) return std::numeric_limits<size_t>::max();
  return conv_grad_workspace_bytes(*problem, algorithm);
}

Shape x_shape(const ConvProblem& p, size_t rank) {
  return rank == 4 ? Shape{p.batch, p.in_channels, p.in_h, p.in_w} : Shape{p.batch, p.in_channels, p.in_w};
}

Shape w_shape(const ConvProblem& p, size_t rank) {
  const int64_t cg = p.channels_per_group();
  return rank == 4 ? Shape{p.out_channels, cg, p.kernel_h, p.kernel_w} : Shape{p.out_channels, cg, p.kernel_w};
}

// The checks both kernels share: inputs present, the problem, the output's shape (dX or dW), the
// algorithm (-1 resolved) and the workspace. Sets *problem and *algorithm.
Status prepare_call(const KernelArgs& a, ConvProblem* problem, int* algorithm) {
  if (a.src.size() != 2 || a.src[0] == nullptr || a.src[1] == nullptr || a.dst.size() != 1 || a.dst[0] == nullptr)
    return internal_error(a.node.describe() + ": called without its two inputs and one output");
  if (ir::is_channels_last(a.node)) return channels_last_unsupported(a.node);
  const Shape& src0 = a.src[0]->shape();
  const Shape& src1 = a.src[1]->shape();
  UCUDNN_ASSIGN_OR_RETURN(*problem, conv_grad_problem(a.node, {src0, src1}));
  const Shape expected =
      a.node.op == OpKind::kConvGradData ? x_shape(*problem, src1.size()) : w_shape(*problem, src1.size());
  if (a.dst[0]->shape() != expected)
    return invalid_argument(a.node.describe() + ": the output is " + shape_to_string(a.dst[0]->shape()) +
                            " but the inputs " + shape_to_string(src0) + ", " + shape_to_string(src1) + " give " +
                            shape_to_string(expected));
  *algorithm = a.algorithm == kDefaultCpuConvAlgorithm ? conv_grad_default_algorithm(*problem) : a.algorithm;
  if (!conv_grad_algorithm_applies(*problem, *algorithm))
    return unsupported(a.node.describe() + ": CPU backward convolution algorithm " + std::to_string(a.algorithm) +
                       " (" + cpu_conv_grad_algorithm_name(a.algorithm) + ") does not apply to inputs " +
                       shape_to_string(src0) + ", " + shape_to_string(src1));
  const size_t needed = conv_grad_workspace_bytes(*problem, *algorithm);
  if (a.workspace_bytes < needed || (needed > 0 && a.workspace == nullptr))
    return invalid_argument(a.node.describe() + ": algorithm " + cpu_conv_grad_algorithm_name(*algorithm) +
                            " needs " + std::to_string(needed) + " workspace bytes, got " +
                            std::to_string(a.workspace_bytes));
  return Status::ok();
}

Status run_conv_grad_data(const KernelArgs& a) {
  if (a.accumulate) return internal_error(a.node.describe() + ": dX is cut with the batch, never accumulated");
  ConvProblem p;
  int algorithm = -1;
  UCUDNN_RETURN_IF_ERROR(prepare_call(a, &p, &algorithm));
  if (p.batch == 0) return Status::ok();
  const float* dys = a.src[0]->data<float>();
  const float* w = a.src[1]->data<float>();
  float* dx = a.dst[0]->data<float>();
  auto* workspace = static_cast<float*>(a.workspace);
  switch (static_cast<CpuConvGradAlgorithm>(algorithm)) {
    case CpuConvGradAlgorithm::kGemm: data_gemm(p, dys, w, dx, workspace); break;
    case CpuConvGradAlgorithm::kGemmPerSample: data_gemm_per_sample(p, dys, w, dx, workspace); break;
    case CpuConvGradAlgorithm::kGemm1x1: data_gemm_1x1(p, dys, w, dx); break;
  }
  return Status::ok();
}

Status run_conv_grad_filter(const KernelArgs& a) {
  ConvProblem p;
  int algorithm = -1;
  UCUDNN_RETURN_IF_ERROR(prepare_call(a, &p, &algorithm));
  const float* x = a.src[0]->data<float>();
  const float* dy = a.src[1]->data<float>();
  float* dw = a.dst[0]->data<float>();
  // The per-sample algorithms add every sample's product: start from zero unless accumulating.
  if (!a.accumulate && (algorithm != kGemm || p.batch == 0)) std::fill(dw, dw + a.dst[0]->numel(), 0.0f);
  if (p.batch == 0) return Status::ok();
  auto* workspace = static_cast<float*>(a.workspace);
  switch (static_cast<CpuConvGradAlgorithm>(algorithm)) {
    case CpuConvGradAlgorithm::kGemm: filter_gemm(p, x, dy, dw, a.accumulate, workspace); break;
    case CpuConvGradAlgorithm::kGemmPerSample: filter_gemm_per_sample(p, x, dy, dw, workspace); break;
    case CpuConvGradAlgorithm::kGemm1x1: filter_gemm_1x1(p, x, dy, dw); break;
  }
  return Status::ok();
}

}  // namespace

const char* cpu_conv_grad_algorithm_name(int algorithm) {
  static const char* const kNames[] = {"gemm", "gemm_per_sample", "gemm_1x1"};
  return algorithm >= 0 && algorithm < kNumCpuConvGradDataAlgorithms ? kNames[algorithm] : "?";
}

Expected<ConvProblem> conv_grad_problem(const ir::Node& node, const std::vector<Shape>& src_shapes) {
  if (src_shapes.size() != 2)
    return invalid_argument(node.describe() + ": expected 2 input shapes, got " + std::to_string(src_shapes.size()));
  if (node.op == OpKind::kConvGradData) {
    Shape x = node.attrs.get_ints("input_shape");
    if (x.empty() || src_shapes[0].empty())
      return invalid_argument(node.describe() + ": input_shape and dY must not be scalars");
    x[0] = src_shapes[0][0];
    return conv_problem(node, x, src_shapes[1]);
  }
  if (node.op == OpKind::kConvGradFilter) return conv_problem(node, src_shapes[0], node.attrs.get_ints("filter_shape"));
  return internal_error(node.describe() + ": not a backward convolution");
}

bool conv_grad_algorithm_applies(const ConvProblem& p, int algorithm) {
  switch (algorithm) {
    case kGemm:
    case kGemmPerSample:
      return true;
    case kGemm1x1:
      return conv_algorithm_applies(p, static_cast<int>(CpuConvAlgorithm::kGemm1x1));
    default:
      return false;
  }
}

int conv_grad_default_algorithm(const ConvProblem& p) {
  if (p.batch > 1 && p.out_plane() <= kSmallOutputPlane &&
      conv_grad_workspace_bytes(p, kGemm) <= kDefaultWorkspaceLimit)
    return kGemm;
  if (conv_grad_algorithm_applies(p, kGemm1x1)) return kGemm1x1;
  return kGemmPerSample;
}

size_t conv_grad_workspace_bytes(const ConvProblem& p, int algorithm) {
  if (algorithm == kDefaultCpuConvAlgorithm) algorithm = conv_grad_default_algorithm(p);
  if (!conv_grad_algorithm_applies(p, algorithm)) return std::numeric_limits<size_t>::max();
  // As conv_workspace_bytes: the column matrix multiplies dims of X and W, so saturating, and
  // SIZE_MAX past kMaxTensorBytes (the kernels index it with int64).
  auto mul = [](size_t a, size_t b) { return saturating_mul(a, b); };
  auto count = [](int64_t dim) { return static_cast<size_t>(dim); };
  const size_t rows = mul(mul(count(p.in_channels), count(p.kernel_h)), count(p.kernel_w));
  const size_t plane = mul(count(p.out_h), count(p.out_w));
  size_t floats = 0;
  if (algorithm == kGemm)
    floats = saturating_add(mul(mul(rows, count(p.batch)), plane),
                            p.batch > 1 ? mul(mul(count(p.batch), count(p.out_channels)), plane) : 0);
  else if (algorithm == kGemmPerSample)
    floats = mul(rows, plane);
  const size_t bytes = saturating_mul(floats, sizeof(float));
  return bytes > kMaxTensorBytes ? std::numeric_limits<size_t>::max() : bytes;
}

const CpuKernel& cpu_kernel_ConvGradData() {
  static const CpuKernel k{.workspace_bytes = workspace_of, .run = run_conv_grad_data};
  return k;
}

const CpuKernel& cpu_kernel_ConvGradFilter() {
  static const CpuKernel k{.workspace_bytes = workspace_of, .run = run_conv_grad_filter};
  return k;
}

}  // namespace ucudnn::cpu
