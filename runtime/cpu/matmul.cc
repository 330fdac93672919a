// CPU kernels of Gemm and MatMul: Eigen GEMMs on row-major maps (Eigen threads
// them with OpenMP; a Gemm of few rows is threaded here, over Y's columns). A Gemm whose B is a
// constant runs through oneDNN's matmul instead where it applies (Note [oneDNN Gemm]). MatMul
// with an unbatched B folds A's batch into its rows (one GEMM); otherwise one GEMM
// per output batch element, broadcasting offsets.
// Note [GCC 12 AVX-512 false positive]: with -march=native on AVX-512 machines GCC 12
// reports -Wmaybe-uninitialized inside its own avx512fintrin.h when Eigen's GEMM
// kernels are inlined (GCC bug 105593). Silenced for this file only.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <omp.h>

#include <algorithm>

#include <Eigen/Core>

#include "runtime/cpu/cpu_kernel.h"
#include "runtime/cpu/onednn_gemm.h"
#include "runtime/ops/matmul_batches.h"

namespace ucudnn::cpu {

namespace {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// A Gemm with fewer rows than this splits Y's columns over the threads, in spans of whole multiples
// of kColumnSpan (a cache line of floats).
constexpr int64_t kMinRowsForEigenThreads = 64;
constexpr int64_t kColumnSpan = 16;
using ConstMap = Eigen::Map<const RowMatrix>;

Status run_gemm(const KernelArgs& args) {
  const ir::Attributes& attrs = args.node.attrs;
  const Tensor& a = *args.src[0];
  const Tensor& b = *args.src[1];
  const Tensor* c = args.src.size() > 2 ? args.src[2] : nullptr;
  Tensor& y = *args.dst[0];
  const bool trans_a = attrs.has("transA") && attrs.get_int("transA") != 0;
  const bool trans_b = attrs.has("transB") && attrs.get_int("transB") != 0;
  const float alpha = attrs.has("alpha") ? attrs.get_float("alpha") : 1.0f;
  const float beta = attrs.has("beta") ? attrs.get_float("beta") : 1.0f;
  if (a.rank() != 2 || b.rank() != 2 || y.rank() != 2)
    return invalid_argument(args.node.describe() + ": Gemm needs 2-D A, B and Y, got " + a.describe() + ", " +
                            b.describe() + ", " + y.describe());
  const int64_t m = trans_a ? a.dim(1) : a.dim(0), k = trans_a ? a.dim(0) : a.dim(1);
  const int64_t n = trans_b ? b.dim(0) : b.dim(1);
  if ((trans_b ? b.dim(1) : b.dim(0)) != k || y.shape() != Shape{m, n})
    return invalid_argument(args.node.describe() + ": A " + a.describe() + ", B " + b.describe() + " and Y " +
                            y.describe() + " do not fit");
  ConstMap ma(a.data<float>(), a.dim(0), a.dim(1));
  ConstMap mb(b.data<float>(), b.dim(0), b.dim(1));
  Eigen::Map<RowMatrix> my(y.data<float>(), m, n);

  const bool accumulate = c != nullptr && beta != 0.0f;
  if (accumulate) {
    // C broadcasts unidirectionally to [M, N]: view it as [cm, cn] with cm, cn in {1, M/N}.
    const int64_t cm = c->rank() == 2 ? c->dim(0) : 1;
    const int64_t cn = c->rank() == 0 ? 1 : c->dim(c->rank() - 1);
    if (c->rank() > 2 || (cm != 1 && cm != m) || (cn != 1 && cn != n))
      return invalid_argument(args.node.describe() + ": C " + c->describe() + " does not broadcast to " + y.describe());
    const float* cd = c->data<float>();
    float* yd = y.data<float>();
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) yd[i * n + j] = beta * cd[(cm == 1 ? 0 : i) * cn + (cn == 1 ? 0 : j)];
  }
  // Eigen threads a GEMM over its rows, and not a GEMV at all: a classifier at batch 1 ran on one
  // core. Few rows: the threads take column spans of Y instead (Eigen runs each span on its thread).
  const bool by_columns = m < kMinRowsForEigenThreads && n >= 2 * kColumnSpan && omp_get_max_threads() > 1;
  auto product = [&](const auto& lhs, const auto& rhs) {
    auto span = [&](int64_t first, int64_t width) {
      auto out = my.middleCols(first, width);
      if (accumulate)
        out.noalias() += alpha * lhs * rhs.middleCols(first, width);
      else
        out.noalias() = alpha * lhs * rhs.middleCols(first, width);
    };
    if (!by_columns) return span(0, n);
    const int64_t spans = std::min<int64_t>(omp_get_max_threads(), n / kColumnSpan);
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < spans; ++t) {
      const int64_t first = n * t / spans / kColumnSpan * kColumnSpan;
      const int64_t last = t + 1 == spans ? n : n * (t + 1) / spans / kColumnSpan * kColumnSpan;
      span(first, last - first);
    }
  };
  if (trans_a && trans_b) product(ma.transpose(), mb.transpose());
  else if (trans_a) product(ma.transpose(), mb);
  else if (trans_b) product(ma, mb.transpose());
  else product(ma, mb);
  return Status::ok();
}

Status run_matmul(const KernelArgs& args) {
  const Tensor& a = *args.src[0];
  const Tensor& b = *args.src[1];
  Tensor& y = *args.dst[0];
  Shape as = a.shape(), bs = b.shape();
  if (as.empty() || bs.empty())
    return invalid_argument(args.node.describe() + ": MatMul operands must have rank >= 1");
  if (as.size() == 1) as.insert(as.begin(), 1);
  if (bs.size() == 1) bs.push_back(1);
  const int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  const Shape a_batch(as.begin(), as.end() - 2), b_batch(bs.begin(), bs.end() - 2);
  Shape batch;
  if (bs[bs.size() - 2] != k || !broadcast_shapes(a_batch, b_batch, &batch) ||
      y.numel() != shape_numel(batch) * m * n)
    return invalid_argument(args.node.describe() + ": A " + a.describe() + ", B " + b.describe() + " and Y " +
                            y.describe() + " do not fit");
  const float* ad = a.data<float>();
  const float* bd = b.data<float>();
  float* yd = y.data<float>();
  if (shape_numel(b_batch) == 1) {  // one GEMM: [batch·M, K] · [K, N]
    const int64_t rows = shape_numel(a_batch) * m;
    Eigen::Map<RowMatrix>(yd, rows, n).noalias() = ConstMap(ad, rows, k) * ConstMap(bd, k, n);
    return Status::ok();
  }
  // Per output matrix: the matrices of A and B it multiplies (broadcast batch dims).
  const std::vector<MatmulBatchPair> pairs = matmul_batch_pairs(a_batch, b_batch);
  for (size_t index = 0; index < pairs.size(); ++index)
    Eigen::Map<RowMatrix>(yd + static_cast<int64_t>(index) * m * n, m, n).noalias() =
        ConstMap(ad + pairs[index].a * m * k, m, k) * ConstMap(bd + pairs[index].b * k * n, k, n);
  return Status::ok();
}

// Note [oneDNN Gemm]; nullptr: the backend calls run_gemm.
Expected<std::unique_ptr<runtime::Kernel>> prepare_gemm_call(const runtime::KernelRequest& request) {
  return onednn::prepare_gemm(request);
}

}  // namespace

const CpuKernel& cpu_kernel_Gemm() {
  static const CpuKernel k{.run = run_gemm, .prepare = prepare_gemm_call};
  return k;
}

const CpuKernel& cpu_kernel_MatMul() {
  static const CpuKernel k{.run = run_matmul};
  return k;
}

}  // namespace ucudnn::cpu
