// Descriptors of the matrix products Gemm and MatMul.
// Gemm: Y [M, N] = alpha · op(A) · op(B) + beta · C, op = optional transpose
//   (transA/transB), A and B 2-D, C optional and unidirectionally broadcast to
//   [M, N]; alpha 1, beta 1, transA 0, transB 0.
// MatMul: numpy.matmul — a 1-D A is [1, K] and a 1-D B is [K, 1] with that dim
//   removed from the result; leading (batch) dims broadcast.
// FLOPs: 2 · M · N · K (per batch element for MatMul).
#include <algorithm>

#include "runtime/core/bytes.h"
#include "runtime/ops/matmul_batches.h"
#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {

Status infer_gemm(InferContext& ctx) {
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(0, {DType::kFloat32}));
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(1, {DType::kFloat32}));
  if (ctx.has_input(2)) UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(2, {DType::kFloat32}));
  const Shape& a = ctx.input(0).shape;
  const Shape& b = ctx.input(1).shape;
  if (a.size() != 2 || b.size() != 2)
    return ctx.error("A and B must be 2-D, got ranks " + std::to_string(a.size()) + " and " + std::to_string(b.size()));
  const bool trans_a = ctx.attrs().has("transA") && ctx.attrs().get_int("transA") != 0;
  const bool trans_b = ctx.attrs().has("transB") && ctx.attrs().get_int("transB") != 0;
  const int64_t m = trans_a ? a[1] : a[0], k = trans_a ? a[0] : a[1];
  const int64_t kb = trans_b ? b[1] : b[0], n = trans_b ? b[0] : b[1];
  if (k != kb)
    return ctx.error("inner dimensions differ: op(A) is [" + std::to_string(m) + ", " + std::to_string(k) +
                     "] and op(B) is [" + std::to_string(kb) + ", " + std::to_string(n) + "] (transA " +
                     std::to_string(trans_a) + ", transB " + std::to_string(trans_b) + ")");
  if (ctx.has_input(2)) {
    const Shape& c = ctx.input(2).shape;
    Shape broadcast;
    if (c.size() > 2 || !broadcast_shapes(c, {m, n}, &broadcast) || broadcast != Shape{m, n})
      return ctx.error("C " + shape_to_string(c) + " cannot be broadcast to the output [" + std::to_string(m) + ", " +
                       std::to_string(n) + "]");
  }
  ctx.set_output(0, DType::kFloat32, {m, n});
  return Status::ok();
}

int64_t gemm_flops(const InferContext& ctx) {
  const Shape& a = ctx.input(0).shape;
  const bool trans_a = ctx.attrs().has("transA") && ctx.attrs().get_int("transA") != 0;
  return saturating_mul(saturating_mul(int64_t{2}, shape_numel(ctx.output(0).shape)), trans_a ? a[0] : a[1]);
}

Status infer_matmul(InferContext& ctx) {
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(0, {DType::kFloat32}));
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(1, {DType::kFloat32}));
  Shape a = ctx.input(0).shape;
  Shape b = ctx.input(1).shape;
  if (a.empty() || b.empty()) return ctx.error("MatMul operands must have rank >= 1 (scalars are not allowed)");
  const bool a_vector = a.size() == 1, b_vector = b.size() == 1;
  if (a_vector) a.insert(a.begin(), 1);
  if (b_vector) b.push_back(1);
  if (a[a.size() - 1] != b[b.size() - 2])
    return ctx.error("inner dimensions differ: A's last dim is " + std::to_string(a[a.size() - 1]) +
                     " but B's " + (b_vector ? "only" : "second-to-last") + " dim is " + std::to_string(b[b.size() - 2]));
  Shape batch;
  if (!broadcast_shapes(Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2), &batch))
    return ctx.error("the batch dims of A and B do not broadcast");
  Shape y = batch;
  if (!a_vector) y.push_back(a[a.size() - 2]);
  if (!b_vector) y.push_back(b[b.size() - 1]);
  ctx.set_output(0, DType::kFloat32, std::move(y));
  return Status::ok();
}

int64_t matmul_flops(const InferContext& ctx) {
  const Shape& a = ctx.input(0).shape;
  return saturating_mul(saturating_mul(int64_t{2}, shape_numel(ctx.output(0).shape)), a[a.size() - 1]);
}

}  // namespace

const OpDescriptor& describe_Gemm() {
  static const OpDescriptor d{.kind = OpKind::kGemm,
                              .min_inputs = 2,
                              .max_inputs = 3,
                              .min_opset = 7,
                              .attrs = {attr_float("alpha", 1.0f), attr_float("beta", 1.0f), attr_int("transA", 0),
                                        attr_int("transB", 0)},
                              .infer = infer_gemm,
                              .flops = gemm_flops};
  return d;
}

const OpDescriptor& describe_MatMul() {
  static const OpDescriptor d{
      .kind = OpKind::kMatMul, .min_inputs = 2, .max_inputs = 2, .min_opset = 1, .infer = infer_matmul, .flops = matmul_flops};
  return d;
}

std::vector<MatmulBatchPair> matmul_batch_pairs(const Shape& a_batch, const Shape& b_batch) {
  const size_t rank = std::max(a_batch.size(), b_batch.size());
  // Right-aligned strides, 0 along a broadcast (size-1 or missing) dim.
  auto broadcast_strides = [rank](const Shape& s) {
    Shape full(rank - s.size(), 1);
    full.insert(full.end(), s.begin(), s.end());
    std::vector<int64_t> strides = shape_strides(full);
    for (size_t d = 0; d < rank; ++d)
      if (full[d] == 1) strides[d] = 0;
    return std::make_pair(full, strides);
  };
  const auto [a_full, a_strides] = broadcast_strides(a_batch);
  const auto [b_full, b_strides] = broadcast_strides(b_batch);
  Shape batch(rank);
  for (size_t d = 0; d < rank; ++d) batch[d] = std::max(a_full[d], b_full[d]);
  std::vector<MatmulBatchPair> pairs(static_cast<size_t>(shape_numel(batch)));
  for (size_t i = 0; i < pairs.size(); ++i) {
    int64_t rest = static_cast<int64_t>(i);
    for (size_t d = rank; d-- > 0;) {
      const int64_t coordinate = rest % batch[d];
      rest /= batch[d];
      pairs[i].a += coordinate * a_strides[d];
      pairs[i].b += coordinate * b_strides[d];
    }
  }
  return pairs;
}

}  // namespace ucudnn
