// Descriptors of the softmax and loss training ops (docs/TRAINING.md), all float32
// with int64 labels, and the gradient rule of SoftmaxCrossEntropyMean.
//
// SoftmaxGrad(dY, Y; axis): dX = Y ⊙ (dY − Σ_axis dY ⊙ Y), Y = softmax over the one dim `axis`.
// LogSoftmaxGrad(dY, Y; axis): dX = dY − exp(Y) ⊙ Σ_axis dY, Y = log-softmax over `axis`.
// SoftmaxCrossEntropyMean(scores [N, C], labels [N]; label_smoothing ε) → (loss [], log_prob [N, C]):
//   log_prob = log-softmax over C; loss = −(1/N) Σ_n Σ_c q_nc log_prob_nc with
//   q = (1 − ε)·onehot(label) + ε/C. Labels outside [0, C) are refused by the kernels at run time.
// SoftmaxCrossEntropyMeanGrad(dLoss [], log_prob, labels; ε) → dScores = dLoss·(exp(log_prob) − q)/N.
// ReduceSum and Expand, the standard ops the rules emit, live with their families
// (reductions.cc, data_movement.cc).
#include "runtime/core/bytes.h"
#include "runtime/ops/gradient.h"
#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {

Status softmax_grad_infer(InferContext& ctx) {
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(0, {DType::kFloat32}));
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(1, {DType::kFloat32}));
  const Shape& y = ctx.input(1).shape;
  if (ctx.input(0).shape != y)
    return ctx.error("dY " + shape_to_string(ctx.input(0).shape) + " and Y " + shape_to_string(y) + " differ");
  const int64_t axis = ctx.attrs().get_int("axis");
  if (normalize_axis(axis, static_cast<int64_t>(y.size())) < 0)
    return ctx.error("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(y.size()));
  ctx.set_output(0, DType::kFloat32, y);
  return Status::ok();
}

// Scores or log_prob [N, C] (input `i`) with labels [N] (input `labels`), and ε in [0, 1].
Status check_scores_and_labels(const InferContext& ctx, size_t i, size_t labels) {
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(i, {DType::kFloat32}));
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(labels, {DType::kInt64}));
  const Shape& scores = ctx.input(i).shape;
  if (scores.size() != 2 || scores[1] == 0)
    return ctx.unsupported_error("scores must be [N, C] with C >= 1, got " + shape_to_string(scores));
  if (ctx.input(labels).shape != Shape{scores[0]})
    return ctx.error("labels " + shape_to_string(ctx.input(labels).shape) + " must be [N] = [" +
                     std::to_string(scores[0]) + "] for scores " + shape_to_string(scores));
  const float smoothing = ctx.attrs().get_float("label_smoothing");
  if (!(smoothing >= 0.0f && smoothing <= 1.0f))
    return ctx.error("label_smoothing " + std::to_string(smoothing) + " is outside [0, 1]");
  return Status::ok();
}

Status loss_infer(InferContext& ctx) {
  UCUDNN_RETURN_IF_ERROR(check_scores_and_labels(ctx, 0, 1));
  ctx.set_output(0, DType::kFloat32, Shape{});
  ctx.set_output(1, DType::kFloat32, ctx.input(0).shape);
  return Status::ok();
}

Status loss_grad_infer(InferContext& ctx) {
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(0, {DType::kFloat32}));
  if (shape_numel(ctx.input(0).shape) != 1)
    return ctx.error("dLoss must hold one value, got " + shape_to_string(ctx.input(0).shape));
  UCUDNN_RETURN_IF_ERROR(check_scores_and_labels(ctx, 1, 2));
  ctx.set_output(0, DType::kFloat32, ctx.input(1).shape);
  return Status::ok();
}

int64_t four_flops_per_element(const InferContext& ctx) {
  return saturating_mul(int64_t{4}, shape_numel(ctx.output(0).shape));
}
int64_t loss_flops(const InferContext& ctx) { return saturating_mul(int64_t{6}, shape_numel(ctx.input(0).shape)); }

// dScores = SoftmaxCrossEntropyMeanGrad(dLoss, log_prob, labels), plus LogSoftmaxGrad of
// log_prob's own gradient when something else consumed log_prob. Labels get none.
Status loss_gradient(GradientContext& ctx) {
  if (!ctx.needs_input_grad(0)) return Status::ok();
  ir::Attributes smoothing;
  smoothing.set("label_smoothing", ctx.node().attrs.get_float("label_smoothing"));
  if (const ir::ValueId d_loss = ctx.output_grad(0); d_loss != ir::kNoValue) {
    UCUDNN_ASSIGN_OR_RETURN(ir::ValueId d_scores, ctx.emit1(OpKind::kSoftmaxCrossEntropyMeanGrad,
                                                            {d_loss, ctx.output(1), ctx.input(1)}, smoothing));
    UCUDNN_RETURN_IF_ERROR(ctx.add_input_grad(0, d_scores));
  }
  if (const ir::ValueId d_log_prob = ctx.output_grad(1); d_log_prob != ir::kNoValue) {
    ir::Attributes axis;
    axis.set("axis", int64_t{1});
    UCUDNN_ASSIGN_OR_RETURN(ir::ValueId d_scores,
                            ctx.emit1(OpKind::kLogSoftmaxGrad, {d_log_prob, ctx.output(1)}, std::move(axis)));
    UCUDNN_RETURN_IF_ERROR(ctx.add_input_grad(0, d_scores));
  }
  return Status::ok();
}

}  // namespace

const OpDescriptor& describe_SoftmaxGrad() {
  static const OpDescriptor d{.kind = OpKind::kSoftmaxGrad,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .attrs = {attr_int("axis", -1)},
                              .infer = softmax_grad_infer,
                              .flops = four_flops_per_element,
                              .internal = true};
  return d;
}

const OpDescriptor& describe_LogSoftmaxGrad() {
  static const OpDescriptor d{.kind = OpKind::kLogSoftmaxGrad,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .attrs = {attr_int("axis", -1)},
                              .infer = softmax_grad_infer,
                              .flops = four_flops_per_element,
                              .internal = true};
  return d;
}

const OpDescriptor& describe_SoftmaxCrossEntropyMean() {
  static const OpDescriptor d{.kind = OpKind::kSoftmaxCrossEntropyMean,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .min_outputs = 2,
                              .max_outputs = 2,
                              .attrs = {attr_float("label_smoothing", 0.0f)},
                              .infer = loss_infer,
                              .flops = loss_flops,
                              .internal = true,
                              .gradient = loss_gradient};
  return d;
}

const OpDescriptor& describe_SoftmaxCrossEntropyMeanGrad() {
  static const OpDescriptor d{.kind = OpKind::kSoftmaxCrossEntropyMeanGrad,
                              .min_inputs = 3,
                              .max_inputs = 3,
                              .attrs = {attr_float("label_smoothing", 0.0f)},
                              .infer = loss_grad_infer,
                              .flops = four_flops_per_element,
                              .internal = true};
  return d;
}

}  // namespace ucudnn
