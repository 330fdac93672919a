// CPU kernels of ConvGradData and ConvGradFilter (see conv_grad.h for the algorithms): the Eigen
// algorithms here, oneDNN's in onednn_conv_grad.cc. The backend prepares a call once (prepare_conv_grad:
// oneDNN's primitive and reorders); `run` is the same computation prepared on the spot, for callers
// without a prepared call (the benchmarker, tests).
//
// Stages of the Eigen algorithms: dY gathered to [K, N·P] (threads over planes), Eigen GEMMs (Eigen
// threads them itself; never called inside our own parallel region), then col2im (data) — im2col and
// col2im are the forward's (conv_algorithms.h). N comes from the shapes of this call (a micro-batch),
// never the node.
#include "runtime/cpu/conv_grad.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

// Note [GCC 12 AVX-512 false positive] (conv_algorithms.cc).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <Eigen/Core>

#include "runtime/core/bytes.h"
#include "runtime/cpu/cpu_kernel.h"
#include "runtime/cpu/onednn_conv_grad.h"
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
constexpr int kOnednn = static_cast<int>(CpuConvGradAlgorithm::kOnednn);
constexpr int kOnednnPlain = static_cast<int>(CpuConvGradAlgorithm::kOnednnPlain);

onednn::Kind onednn_kind(int algorithm) {
  return algorithm == kOnednnPlain ? onednn::Kind::kDirectPlain : onednn::Kind::kDirect;
}

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

// --- the Eigen algorithms as a prepared call ---

// Nothing to make once: each run calls the algorithm's functions above.
class EigenConvGrad final : public PreparedConvGrad {
 public:
  EigenConvGrad(OpKind op, const ConvProblem& p, int algorithm) : op_(op), p_(p), algorithm_(algorithm) {}
  size_t workspace_bytes() const override { return conv_grad_workspace_bytes(op_, p_, algorithm_); }
  void run(const float* src0, const float* src1, float* dst, bool accumulate, void* workspace) override {
    auto* ws = static_cast<float*>(workspace);
    if (op_ == OpKind::kConvGradData) {
      if (p_.batch == 0) return;
      switch (static_cast<CpuConvGradAlgorithm>(algorithm_)) {
        case CpuConvGradAlgorithm::kGemm: data_gemm(p_, src0, src1, dst, ws); break;
        case CpuConvGradAlgorithm::kGemmPerSample: data_gemm_per_sample(p_, src0, src1, dst, ws); break;
        case CpuConvGradAlgorithm::kGemm1x1: data_gemm_1x1(p_, src0, src1, dst); break;
        default: break;  // oneDNN's: never here (prepare_conv_grad makes them oneDNN's calls)
      }
      return;
    }
    // The per-sample algorithms add every sample's product: start from zero unless accumulating.
    if (!accumulate && (algorithm_ != kGemm || p_.batch == 0))
      std::fill(dst, dst + p_.out_channels * p_.patch_size(), 0.0f);
    if (p_.batch == 0) return;
    switch (static_cast<CpuConvGradAlgorithm>(algorithm_)) {
      case CpuConvGradAlgorithm::kGemm: filter_gemm(p_, src0, src1, dst, accumulate, ws); break;
      case CpuConvGradAlgorithm::kGemmPerSample: filter_gemm_per_sample(p_, src0, src1, dst, ws); break;
      case CpuConvGradAlgorithm::kGemm1x1: filter_gemm_1x1(p_, src0, src1, dst); break;
      default: break;
    }
  }

 private:
  OpKind op_;
  ConvProblem p_;
  int algorithm_;
};

// --- the kernels ---

// The kernels' workspace query.
size_t workspace_of(const ir::Node& node, const std::vector<Shape>& src_shapes, int algorithm) {
  auto problem = conv_grad_problem(node, src_shapes);
  if (!problem) return std::numeric_limits<size_t>::max();
  return conv_grad_workspace_bytes(node.op, *problem, algorithm);
}

Shape x_shape(const ConvProblem& p, size_t rank) {
  return rank == 4 ? Shape{p.batch, p.in_channels, p.in_h, p.in_w} : Shape{p.batch, p.in_channels, p.in_w};
}

Shape w_shape(const ConvProblem& p, size_t rank) {
  const int64_t cg = p.channels_per_group();
  return rank == 4 ? Shape{p.out_channels, cg, p.kernel_h, p.kernel_w} : Shape{p.out_channels, cg, p.kernel_w};
}

// A call's shapes, checked, and what they make: the problem and the algorithm (-1 resolved).
struct ConvGradSetup {
  ConvProblem problem;
  int algorithm = kDefaultCpuConvAlgorithm;
};

// The checks both kernels share, on the inputs' shapes and dtypes and the output's (dX or dW) shape:
// float32 inputs, not channels-last, the problem, the output's shape, the algorithm applying.
Expected<ConvGradSetup> conv_grad_setup(const ir::Node& node, const std::vector<Shape>& src,
                                        const std::vector<DType>& dtypes, const Shape& dst, int algorithm) {
  if (src.size() != 2) return internal_error(node.describe() + ": called without its two inputs");
  for (size_t i = 0; i < dtypes.size(); ++i)
    if (dtypes[i] != DType::kFloat32)
      return unsupported(node.describe() + ": input " + std::to_string(i) + " is " + dtype_name(dtypes[i]) +
                         "; the CPU backward convolution computes float32");
  if (ir::is_channels_last(node)) return channels_last_unsupported(node);
  ConvGradSetup s;
  UCUDNN_ASSIGN_OR_RETURN(s.problem, conv_grad_problem(node, src));
  const Shape expected =
      node.op == OpKind::kConvGradData ? x_shape(s.problem, src[1].size()) : w_shape(s.problem, src[1].size());
  if (dst != expected)
    return invalid_argument(node.describe() + ": the output is " + shape_to_string(dst) + " but the inputs " +
                            shape_to_string(src[0]) + ", " + shape_to_string(src[1]) + " give " +
                            shape_to_string(expected));
  s.algorithm = algorithm == kDefaultCpuConvAlgorithm ? conv_grad_default_algorithm(s.problem) : algorithm;
  if (!conv_grad_algorithm_applies(node.op, s.problem, s.algorithm))
    return unsupported(node.describe() + ": CPU backward convolution algorithm " + std::to_string(algorithm) + " (" +
                       cpu_conv_grad_algorithm_name(algorithm) + ") does not apply to inputs " +
                       shape_to_string(src[0]) + ", " + shape_to_string(src[1]));
  return s;
}

Status check_workspace(const ir::Node& node, int algorithm, size_t needed, const void* workspace, size_t bytes) {
  if (bytes >= needed && (needed == 0 || workspace != nullptr)) return Status::ok();
  return invalid_argument(node.describe() + ": algorithm " + cpu_conv_grad_algorithm_name(algorithm) + " needs " +
                          std::to_string(needed) + " workspace bytes, got " + std::to_string(bytes));
}

Status check_accumulate(const ir::Node& node, bool accumulate) {
  if (accumulate && node.op == OpKind::kConvGradData)
    return internal_error(node.describe() + ": dX is cut with the batch, never accumulated");
  return Status::ok();
}

// The kernel's plain call: the same computation prepared on the spot.
Status run_conv_grad(const KernelArgs& a) {
  UCUDNN_RETURN_IF_ERROR(check_accumulate(a.node, a.accumulate));
  if (a.src.size() != 2 || a.src[0] == nullptr || a.src[1] == nullptr || a.dst.size() != 1 || a.dst[0] == nullptr)
    return internal_error(a.node.describe() + ": called without its two inputs and one output");
  UCUDNN_ASSIGN_OR_RETURN(ConvGradSetup s, conv_grad_setup(a.node, {a.src[0]->shape(), a.src[1]->shape()},
                                                           {a.src[0]->dtype(), a.src[1]->dtype()},
                                                           a.dst[0]->shape(), a.algorithm));
  std::unique_ptr<PreparedConvGrad> conv = prepare_conv_grad(a.node.op, s.problem, s.algorithm);
  UCUDNN_RETURN_IF_ERROR(check_workspace(a.node, s.algorithm, conv->workspace_bytes(), a.workspace, a.workspace_bytes));
  conv->run(a.src[0]->data<float>(), a.src[1]->data<float>(), a.dst[0]->data<float>(), a.accumulate, a.workspace);
  return Status::ok();
}

// The backend's prepared call: shapes checked once, the PreparedConvGrad made once.
class ConvGradCall final : public runtime::Kernel {
 public:
  ConvGradCall(const ir::Node& node, std::vector<Shape> src_shapes, Shape dst_shape, int algorithm, bool accumulate,
               std::unique_ptr<PreparedConvGrad> conv)
      : node_(node), src_shapes_(std::move(src_shapes)), dst_shape_(std::move(dst_shape)), algorithm_(algorithm),
        accumulate_(accumulate), conv_(std::move(conv)) {}

  size_t workspace_bytes() const override { return conv_->workspace_bytes(); }

  Status run(const runtime::KernelIo& io) override {
    if (io.src.size() != 2 || io.dst.size() != 1 || io.src[0].shape != src_shapes_[0] ||
        io.src[1].shape != src_shapes_[1] || io.dst[0].shape != dst_shape_)
      return internal_error(node_.describe() + ": run with other tensors than it was prepared for");
    UCUDNN_RETURN_IF_ERROR(check_workspace(node_, algorithm_, conv_->workspace_bytes(), io.workspace,
                                           io.workspace_bytes));
    use_session_threads();
    conv_->run(io.src[0].as<const float>(), io.src[1].as<const float>(), io.dst[0].as<float>(), accumulate_,
               io.workspace);
    return Status::ok();
  }

 private:
  const ir::Node& node_;
  std::vector<Shape> src_shapes_;
  Shape dst_shape_;
  int algorithm_;
  bool accumulate_;
  std::unique_ptr<PreparedConvGrad> conv_;
};

Expected<std::unique_ptr<runtime::Kernel>> prepare_conv_grad_call(const runtime::KernelRequest& r) {
  UCUDNN_RETURN_IF_ERROR(check_accumulate(r.node, r.accumulate));
  if (r.src_shapes.size() != 2 || r.dst_shapes.size() != 1 || r.node.inputs.size() != 2)
    return internal_error(r.node.describe() + ": prepared without its two inputs and one output");
  std::vector<DType> dtypes;
  for (ir::ValueId v : r.node.inputs) dtypes.push_back(v == ir::kNoValue ? DType::kUndefined : r.graph.value(v).dtype);
  UCUDNN_ASSIGN_OR_RETURN(ConvGradSetup s, conv_grad_setup(r.node, r.src_shapes, dtypes, r.dst_shapes[0], r.algorithm));
  std::unique_ptr<PreparedConvGrad> conv = prepare_conv_grad(r.node.op, s.problem, s.algorithm);
  return std::unique_ptr<runtime::Kernel>(
      new ConvGradCall(r.node, r.src_shapes, r.dst_shapes[0], s.algorithm, r.accumulate, std::move(conv)));
}

}  // namespace

const char* cpu_conv_grad_algorithm_name(int algorithm) {
  static const char* const kNames[kNumCpuConvGradDataAlgorithms] = {"gemm", "gemm_per_sample", "gemm_1x1", "onednn",
                                                                    "onednn_plain"};
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

bool conv_grad_algorithm_applies(OpKind op, const ConvProblem& p, int algorithm) {
  if (op != OpKind::kConvGradData && op != OpKind::kConvGradFilter) return false;
  if (p.channels_last) return false;  // the kernels refuse channels-last nodes
  switch (algorithm) {
    case kGemm:
    case kGemmPerSample:
      return true;
    case kGemm1x1:
      return conv_algorithm_applies(p, static_cast<int>(CpuConvAlgorithm::kGemm1x1));
    case kOnednn:
    case kOnednnPlain:
      return onednn::grad_applies(op, p, onednn_kind(algorithm));
    default:
      return false;
  }
}

int conv_grad_default_algorithm(const ConvProblem& p) {
  if (p.batch > 1 && p.out_plane() <= kSmallOutputPlane &&
      conv_grad_workspace_bytes(OpKind::kConvGradData, p, kGemm) <= kDefaultWorkspaceLimit)
    return kGemm;
  if (conv_grad_algorithm_applies(OpKind::kConvGradData, p, kGemm1x1)) return kGemm1x1;
  return kGemmPerSample;
}

size_t conv_grad_workspace_bytes(OpKind op, const ConvProblem& p, int algorithm) {
  if (algorithm == kDefaultCpuConvAlgorithm) algorithm = conv_grad_default_algorithm(p);
  if (!conv_grad_algorithm_applies(op, p, algorithm)) return std::numeric_limits<size_t>::max();
  if (algorithm == kOnednn || algorithm == kOnednnPlain)
    return onednn::grad_workspace_bytes(op, p, onednn_kind(algorithm));
  // As conv_workspace_bytes: the column matrix multiplies dims of X and W, so saturating, and
  // SIZE_MAX past kMaxTensorBytes (the kernels index it with int64). The same in both directions.
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

std::unique_ptr<PreparedConvGrad> prepare_conv_grad(OpKind op, const ConvProblem& p, int algorithm) {
  if (algorithm == kDefaultCpuConvAlgorithm) algorithm = conv_grad_default_algorithm(p);
  if (!conv_grad_algorithm_applies(op, p, algorithm)) return nullptr;
  if (algorithm == kOnednn || algorithm == kOnednnPlain) return onednn::prepare_grad(op, p, onednn_kind(algorithm));
  return std::make_unique<EigenConvGrad>(op, p, algorithm);
}

const CpuKernel& cpu_kernel_ConvGradData() {
  static const CpuKernel k{.workspace_bytes = workspace_of, .run = run_conv_grad, .prepare = prepare_conv_grad_call};
  return k;
}

const CpuKernel& cpu_kernel_ConvGradFilter() {
  static const CpuKernel k{.workspace_bytes = workspace_of, .run = run_conv_grad, .prepare = prepare_conv_grad_call};
  return k;
}

}  // namespace ucudnn::cpu
