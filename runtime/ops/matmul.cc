// Descriptors of the matrix products Gemm and MatMul.
// Gemm: Y [M, N] = alpha · op(A) · op(B) + beta · C, op = optional transpose
//   (transA/transB), A and B 2-D, C optional and unidirectionally broadcast to
//   [M, N]; alpha 1, beta 1, transA 0, transB 0.
// MatMul: numpy.matmul — a 1-D A is [1, K] and a 1-D B is [K, 1] with that dim
//   removed from the result; leading (batch) dims broadcast.
// FLOPs: 2 · M · N · K (per batch element for MatMul).
// Gradient rules: Gemm's dA and dB are Gemms of dY with the other operand
// (transposes chosen so that no Transpose node is needed), dC = beta · dY summed
// to C's shape. MatMul's are MatMuls with the other operand's last two dims
// swapped, summed over broadcast batch dims; 1-D operands take the unit dim
// numpy gives them and drop it again; 2-D pairs use Gemm's transposes instead.
#include <algorithm>

#include "runtime/core/bytes.h"
#include "runtime/ops/gradient.h"
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

ir::Attributes gemm_attrs(bool trans_a, bool trans_b, float alpha) {
  ir::Attributes attrs;
  attrs.set("transA", int64_t{trans_a});
  attrs.set("transB", int64_t{trans_b});
  attrs.set("alpha", alpha);
  attrs.set("beta", 1.0f);
  return attrs;
}

// Y = alpha·op(A)·op(B) + beta·C. With G = dY:
//   dA = alpha·G·op(B)ᵀ, stored transposed when transA: alpha·op(B)·Gᵀ;
//   dB = alpha·op(A)ᵀ·G, stored transposed when transB: alpha·Gᵀ·op(A);
//   dC = beta·G summed to C's shape.
Status gemm_gradient(GradientContext& ctx) {
  const ir::ValueId dy = ctx.output_grad(0);
  if (dy == ir::kNoValue) return Status::ok();
  const ir::Attributes& attrs = ctx.node().attrs;
  const bool trans_a = attrs.get_int("transA") != 0, trans_b = attrs.get_int("transB") != 0;
  const float alpha = attrs.get_float("alpha"), beta = attrs.get_float("beta");
  const ir::ValueId a = ctx.input(0), b = ctx.input(1);
  if (ctx.needs_input_grad(0)) {
    auto da = trans_a ? ctx.emit1(OpKind::kGemm, {b, dy}, gemm_attrs(trans_b, true, alpha))
                      : ctx.emit1(OpKind::kGemm, {dy, b}, gemm_attrs(false, !trans_b, alpha));
    if (!da) return da.status();
    UCUDNN_RETURN_IF_ERROR(ctx.add_input_grad(0, *da));
  }
  if (ctx.needs_input_grad(1)) {
    auto db = trans_b ? ctx.emit1(OpKind::kGemm, {dy, a}, gemm_attrs(true, trans_a, alpha))
                      : ctx.emit1(OpKind::kGemm, {a, dy}, gemm_attrs(!trans_a, false, alpha));
    if (!db) return db.status();
    UCUDNN_RETURN_IF_ERROR(ctx.add_input_grad(1, *db));
  }
  if (ctx.needs_input_grad(2)) {
    UCUDNN_ASSIGN_OR_RETURN(ir::ValueId dc, ctx.reduce_to_shape(dy, ctx.value(ctx.input(2)).shape));
    if (beta != 1.0f) {
      UCUDNN_ASSIGN_OR_RETURN(dc, ctx.emit1(OpKind::kMul, {dc, ctx.float_constant(beta, "beta")}));
    }
    UCUDNN_RETURN_IF_ERROR(ctx.add_input_grad(2, dc));
  }
  return Status::ok();
}

// `v` (rank >= 2) with its last two dims swapped.
Expected<ir::ValueId> swap_last_two(GradientContext& ctx, ir::ValueId v) {
  const size_t rank = ctx.value(v).shape.size();
  std::vector<int64_t> perm(rank);
  for (size_t i = 0; i < rank; ++i) perm[i] = static_cast<int64_t>(i);
  std::swap(perm[rank - 1], perm[rank - 2]);
  ir::Attributes attrs;
  attrs.set("perm", perm);
  return ctx.emit1(OpKind::kTranspose, {v}, std::move(attrs));
}

// X · Yᵀ (transposed_operand 1) or Xᵀ · Y (0), both at least 2-D: a Gemm when both are
// 2-D, else a MatMul after a Transpose.
Expected<ir::ValueId> product_with_transpose(GradientContext& ctx, ir::ValueId x, ir::ValueId y, int transposed) {
  if (ctx.value(x).shape.size() == 2 && ctx.value(y).shape.size() == 2)
    return ctx.emit1(OpKind::kGemm, {x, y}, gemm_attrs(transposed == 0, transposed == 1, 1.0f));
  if (transposed == 0) {
    UCUDNN_ASSIGN_OR_RETURN(x, swap_last_two(ctx, x));
  } else {
    UCUDNN_ASSIGN_OR_RETURN(y, swap_last_two(ctx, y));
  }
  return ctx.emit1(OpKind::kMatMul, {x, y});
}

// Y = A·B (numpy.matmul). With A, B, G = dY as matrices (a 1-D A is [1, K], a 1-D B is [K, 1],
// G gets those unit dims back): dA = G·Bᵀ and dB = Aᵀ·G, each summed to its operand's shape.
Status matmul_gradient(GradientContext& ctx) {
  const ir::ValueId dy = ctx.output_grad(0);
  if (dy == ir::kNoValue) return Status::ok();
  const Shape& a_shape = ctx.value(ctx.input(0)).shape;
  const Shape& b_shape = ctx.value(ctx.input(1)).shape;
  Shape a_matrix = a_shape, b_matrix = b_shape, g_matrix = ctx.value(dy).shape;
  if (a_shape.size() == 1) {
    a_matrix.insert(a_matrix.begin(), 1);
    g_matrix.insert(g_matrix.end() - (b_shape.size() == 1 ? 0 : 1), 1);
  }
  if (b_shape.size() == 1) {
    b_matrix.push_back(1);
    g_matrix.push_back(1);
  }
  UCUDNN_ASSIGN_OR_RETURN(ir::ValueId g, ctx.reshape(dy, g_matrix));
  if (ctx.needs_input_grad(0)) {
    UCUDNN_ASSIGN_OR_RETURN(ir::ValueId b, ctx.reshape(ctx.input(1), b_matrix));
    UCUDNN_ASSIGN_OR_RETURN(ir::ValueId da, product_with_transpose(ctx, g, b, 1));
    UCUDNN_ASSIGN_OR_RETURN(da, ctx.reduce_to_shape(da, a_matrix));
    UCUDNN_ASSIGN_OR_RETURN(da, ctx.reshape(da, a_shape));
    UCUDNN_RETURN_IF_ERROR(ctx.add_input_grad(0, da));
  }
  if (ctx.needs_input_grad(1)) {
    UCUDNN_ASSIGN_OR_RETURN(ir::ValueId a, ctx.reshape(ctx.input(0), a_matrix));
    UCUDNN_ASSIGN_OR_RETURN(ir::ValueId db, product_with_transpose(ctx, a, g, 0));
    UCUDNN_ASSIGN_OR_RETURN(db, ctx.reduce_to_shape(db, b_matrix));
    UCUDNN_ASSIGN_OR_RETURN(db, ctx.reshape(db, b_shape));
    UCUDNN_RETURN_IF_ERROR(ctx.add_input_grad(1, db));
  }
  return Status::ok();
}

}  // namespace

const OpDescriptor& describe_Gemm() {
  static const OpDescriptor d{.kind = OpKind::kGemm,
                              .min_inputs = 2,
                              .max_inputs = 3,
                              .min_opset = 1,  // opsets 1-6's `broadcast`: onnx_import/upgrade.cc
                              .attrs = {attr_float("alpha", 1.0f), attr_float("beta", 1.0f), attr_int("transA", 0),
                                        attr_int("transB", 0)},
                              .infer = infer_gemm,
                              .flops = gemm_flops,
                              .gradient = gemm_gradient};
  return d;
}

const OpDescriptor& describe_MatMul() {
  static const OpDescriptor d{.kind = OpKind::kMatMul,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .min_opset = 1,
                              .infer = infer_matmul,
                              .flops = matmul_flops,
                              .gradient = matmul_gradient};
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
