// Gemm and MatMul on the GPU through cuBLAS (float32; TF32 or strict FP32 per
// the context's math mode, Note [cuBLAS math mode] in cuda_context.cc).
//
// Note [row-major GEMM in cuBLAS]: cuBLAS is column-major; a row-major [R, C]
// matrix is, to cuBLAS, its transpose. So Y = op(A)·op(B) (row-major) is
// computed as Yᵀ = op(B)ᵀ·op(A)ᵀ: cuBLAS gets B first, then A, and m/n swapped.
// Gemm's C is first broadcast into Y (strided copy), then added with beta.
// MatMul: 1-D operands get a unit dim; batch dims either all on A with a 2-D B
// (one GEMM with M·batch rows), or equal on both / absent on one side
// (strided batched GEMM, stride 0 for the shared side). Other broadcasts
// ([2, 1, M, K]·[3, K, N]) run one GEMM per output batch element, at offsets
// computed at prepare, as the CPU kernel does.
#include <algorithm>
#include <limits>
#include <vector>

#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/cuda_kernel.h"
#include "runtime/cuda/elementwise.h"
#include "runtime/ops/matmul_batches.h"

namespace ucudnn::cuda {

namespace {

class GemmState final : public KernelState {
 public:
  cublasOperation_t op_a = CUBLAS_OP_N, op_b = CUBLAS_OP_N;
  int m = 0, n = 0, k = 0, lda = 0, ldb = 0;
  float alpha = 1, beta = 0;
  bool has_c = false;
  StridedLayout c_layout;
  // batched (MatMul)
  int batch = 1;
  long long stride_a = 0, stride_b = 0, stride_y = 0;
  // broadcast batches (MatMul): element offsets of A and B for each output batch element
  std::vector<int64_t> offsets_a, offsets_b;

  Status run(const RunArgs& a) override {
    float* y = a.dst[0].as<float>();
    if (has_c)
      UCUDNN_CUDA_CHECK(launch_strided_copy(a.src[2].data, y, sizeof(float), a.dst[0].numel(), c_layout,
                                            a.ctx.stream()),
                        "broadcasting C");
    const float* pa = a.src[0].as<const float>();
    const float* pb = a.src[1].as<const float>();
    if (!offsets_a.empty()) {
      for (size_t i = 0; i < offsets_a.size(); ++i)
        UCUDNN_CUBLAS_CHECK(cublasSgemm(a.ctx.cublas(), op_b, op_a, n, m, k, &alpha, pb + offsets_b[i], ldb,
                                        pa + offsets_a[i], lda, &beta, y + static_cast<int64_t>(i) * stride_y, n),
                            "batch element " + std::to_string(i) + " m=" + std::to_string(m) + " n=" +
                                std::to_string(n) + " k=" + std::to_string(k));
    } else if (batch == 1) {
      UCUDNN_CUBLAS_CHECK(cublasSgemm(a.ctx.cublas(), op_b, op_a, n, m, k, &alpha, pb, ldb, pa, lda, &beta, y, n),
                          "m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k));
    } else {
      UCUDNN_CUBLAS_CHECK(cublasSgemmStridedBatched(a.ctx.cublas(), op_b, op_a, n, m, k, &alpha, pb, ldb, stride_b,
                                                    pa, lda, stride_a, &beta, y, n, stride_y, batch),
                          "batch=" + std::to_string(batch) + " m=" + std::to_string(m) + " n=" +
                              std::to_string(n) + " k=" + std::to_string(k));
    }
    return Status::ok();
  }
};

bool fits_int(int64_t v) { return v >= 0 && v <= std::numeric_limits<int>::max(); }

Expected<std::unique_ptr<KernelState>> prepare_gemm(const PrepareArgs& a) {
  if (a.src_dtype(0) != DType::kFloat32 || a.src_dtype(1) != DType::kFloat32)
    return a.unsupported_error("only float32");
  const Shape& as = a.src_shapes[0];
  const Shape& bs = a.src_shapes[1];
  const bool trans_a = a.node.attrs.get_int("transA") != 0, trans_b = a.node.attrs.get_int("transB") != 0;
  auto s = std::make_unique<GemmState>();
  const int64_t m = trans_a ? as[1] : as[0], k = trans_a ? as[0] : as[1];
  const int64_t n = trans_b ? bs[0] : bs[1];
  if (!fits_int(m) || !fits_int(n) || !fits_int(k)) return a.unsupported_error("dims above 2^31");
  s->m = static_cast<int>(m);
  s->n = static_cast<int>(n);
  s->k = static_cast<int>(k);
  s->op_a = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  s->op_b = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  s->lda = static_cast<int>(trans_a ? m : k);
  s->ldb = static_cast<int>(trans_b ? k : n);
  s->alpha = a.node.attrs.get_float("alpha");
  s->has_c = a.has_src(2) && a.node.attrs.get_float("beta") != 0.0f;
  s->beta = s->has_c ? a.node.attrs.get_float("beta") : 0.0f;
  if (s->has_c && !set_broadcast_layout(a.dst_shapes[0], a.src_shapes[2], 0, &s->c_layout))
    return a.unsupported_error("C does not broadcast to the output");
  return std::unique_ptr<KernelState>(std::move(s));
}

// Offsets of A's and B's matrices (`a_matrix`, `b_matrix` elements each) for every
// matrix of the broadcast batch of `a_batch` and `b_batch`.
void broadcast_offsets(const Shape& a_batch, const Shape& b_batch, int64_t a_matrix, int64_t b_matrix,
                       GemmState* s) {
  for (const MatmulBatchPair& pair : matmul_batch_pairs(a_batch, b_batch)) {
    s->offsets_a.push_back(pair.a * a_matrix);
    s->offsets_b.push_back(pair.b * b_matrix);
  }
}

Expected<std::unique_ptr<KernelState>> prepare_matmul(const PrepareArgs& a) {
  if (a.src_dtype(0) != DType::kFloat32 || a.src_dtype(1) != DType::kFloat32)
    return a.unsupported_error("only float32");
  Shape as = a.src_shapes[0], bs = a.src_shapes[1];
  if (as.size() == 1) as.insert(as.begin(), 1);
  if (bs.size() == 1) bs.push_back(1);
  const int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  const Shape a_batch(as.begin(), as.end() - 2), b_batch(bs.begin(), bs.end() - 2);
  const int64_t batch_a = shape_numel(a_batch), batch_b = shape_numel(b_batch);
  auto s = std::make_unique<GemmState>();
  if (batch_b == 1) {  // one GEMM over all of A's rows
    if (!fits_int(batch_a * m)) return a.unsupported_error("dims above 2^31");
    s->m = static_cast<int>(batch_a * m);
  } else {
    Shape a_aligned = a_batch, b_aligned = b_batch;  // right-aligned batch dims
    while (a_aligned.size() < b_aligned.size()) a_aligned.insert(a_aligned.begin(), 1);
    while (b_aligned.size() < a_aligned.size()) b_aligned.insert(b_aligned.begin(), 1);
    if (batch_a != 1 && a_aligned != b_aligned) broadcast_offsets(a_aligned, b_aligned, m * k, k * n, s.get());
    s->m = static_cast<int>(m);
    s->batch = static_cast<int>(batch_b);
    s->stride_a = batch_a == 1 ? 0 : m * k;
    s->stride_b = k * n;
    s->stride_y = m * n;
  }
  if (!fits_int(n) || !fits_int(k) || !fits_int(m)) return a.unsupported_error("dims above 2^31");
  s->n = static_cast<int>(n);
  s->k = static_cast<int>(k);
  s->lda = s->k;
  s->ldb = s->n;
  return std::unique_ptr<KernelState>(std::move(s));
}

}  // namespace

const CudaKernel& cuda_kernel_Gemm() {
  static const CudaKernel k{.prepare = prepare_gemm};
  return k;
}

const CudaKernel& cuda_kernel_MatMul() {
  static const CudaKernel k{.prepare = prepare_matmul};
  return k;
}

}  // namespace ucudnn::cuda
