// Descriptors of training-mode batch normalization (internal ops, docs/TRAINING.md), NCHW with
// X [N, C, spatial...] (rank >= 2) and per-channel statistics over M = N · prod(spatial) values:
//
//   BatchNormTrain (X, scale [C], B [C], running_mean [C], running_var [C], [Z like X])
//     → (Y like X, new_running_mean [C], new_running_var [C], saved_mean [C], saved_inv_std [C])
//   BatchNormGrad  (dY like X, X, scale [C], saved_mean [C], saved_inv_std [C], [Y like X])
//     → (dX like X, dScale [C], dBias [C], [dZ like X])
//
// BatchNormTrain normalises with the batch mean and biased variance: saved_inv_std = 1/sqrt(var + epsilon);
// the running statistics follow ONNX's momentum (running·momentum + batch·(1 − momentum)) with the
// unbiased variance var·M/(M − 1), as PyTorch does. M = 1 is refused as PyTorch refuses it ("expected
// more than 1 value per channel when training"). Whole batch: never micro-batched.
// FLOPs: a few per element (statistics, normalisation; the gradient's two reductions and update).
//
// Note [batch norm with its activation]: training/fuse_batch_norm.h fuses a ResNet block's ending into
// the BatchNormTrain node, so that the forward writes Y once and the backward is one reduction pass and
// one elementwise pass, with no Add, Relu or ActivationGrad of their own:
//  - BatchNormTrain's `activation` ("" or "Relu") and optional residual Z (float32, exactly X's shape):
//    Y = activation(scale · (X − mean) · inv_std + B + Z), the normalised value rounded to float before
//    Z is added, as the separate Add saw it. The statistics are X's alone.
//  - BatchNormGrad's `activation` ("" or "Relu"): with "Relu" input 5 is the fused forward's output Y
//    and dY is masked by it first, g = dY · Relu'(Y) — ActivationGrad's rule for Relu, which reads
//    Relu's output (Note [derivatives at kinks], activation_grad.h: 0 where Y <= 0). dX, dScale and
//    dBias are those of g; the optional output 3, dZ = g, is the residual's gradient, written in
//    the same pass as dX. Without an activation there is no input 5 and no output 3 (dZ would be dY).
// Gradient rule of BatchNormTrain: BatchNormGrad gives X, scale and B theirs (the fused form when the
// node has a Relu); Z gets dZ (dY itself without an activation); the running statistics get none
// (they are updated, not differentiated).
#include "runtime/core/bytes.h"
#include "runtime/ir/fusion.h"
#include "runtime/ops/gradient.h"
#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {

// Note [batch norm with its activation]: BatchNormTrain's Z and BatchNormGrad's Y are input 5,
// BatchNormGrad's dZ output 3.
constexpr size_t kResidualInput = 5, kForwardOutputInput = 5, kResidualGradOutput = 3;

// The node's `activation`, "" or "Relu" (read as the fused nodes' attribute: absent means "").
Expected<bool> fused_relu(const InferContext& ctx) {
  const std::string activation = ir::fused_activation(ctx.node());
  if (activation.empty() || activation == "Relu") return activation == "Relu";
  return ctx.error("activation '" + activation + "' is not supported (\"\" or \"Relu\")");
}

// Checks that input i is float32 of exactly X's shape.
Status check_like_x(const InferContext& ctx, size_t i, const char* name, const Shape& x) {
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(i, {DType::kFloat32}));
  if (ctx.input(i).shape != x)
    return ctx.error(std::string(name) + " " + shape_to_string(ctx.input(i).shape) + " must have X's shape " +
                     shape_to_string(x));
  return Status::ok();
}

// Checks that inputs first..first+names.size()-1 are float32 [C]; C = X's dim 1.
Status check_channel_inputs(const InferContext& ctx, int64_t channels, size_t first,
                            std::initializer_list<const char*> names) {
  size_t i = first;
  for (const char* name : names) {
    UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(i, {DType::kFloat32}));
    if (ctx.input(i).shape != Shape{channels})
      return ctx.error(std::string(name) + " must have shape [" + std::to_string(channels) + "] (X's channels), got " +
                       shape_to_string(ctx.input(i).shape));
    ++i;
  }
  return Status::ok();
}

// Checks X [N, C, ...] of rank >= 2 with more than one value per channel.
Status check_batch_norm_input(const InferContext& ctx, const Shape& x) {
  if (x.size() < 2) return ctx.error("X must have rank >= 2 ([N, C, ...]), got " + shape_to_string(x));
  const int64_t channels = x[1];
  const int64_t per_channel = channels == 0 ? 0 : shape_numel(x) / channels;
  if (channels > 0 && per_channel == 1)
    return ctx.error("expected more than 1 value per channel when training, got X " + shape_to_string(x) +
                     " (use a batch of more than one sample)");
  return Status::ok();
}

Status infer_batch_norm_train(InferContext& ctx) {
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(0, {DType::kFloat32}));
  const Shape& x = ctx.input(0).shape;
  UCUDNN_RETURN_IF_ERROR(check_batch_norm_input(ctx, x));
  UCUDNN_RETURN_IF_ERROR(check_channel_inputs(ctx, x[1], 1, {"scale", "B", "running_mean", "running_var"}));
  const float momentum = ctx.attrs().get_float("momentum");
  if (!(momentum >= 0.0f && momentum <= 1.0f))
    return ctx.error("momentum " + std::to_string(momentum) + " must lie in [0, 1]");
  if (!(ctx.attrs().get_float("epsilon") > 0.0f))
    return ctx.error("epsilon " + std::to_string(ctx.attrs().get_float("epsilon")) + " must be > 0");
  UCUDNN_RETURN_IF_ERROR(fused_relu(ctx).status());
  if (ctx.has_input(kResidualInput)) UCUDNN_RETURN_IF_ERROR(check_like_x(ctx, kResidualInput, "Z", x));
  ctx.set_output(0, DType::kFloat32, x);
  for (size_t o = 1; o < 5; ++o) ctx.set_output(o, DType::kFloat32, Shape{x[1]});
  return Status::ok();
}

Status infer_batch_norm_grad(InferContext& ctx) {
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(0, {DType::kFloat32}));
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(1, {DType::kFloat32}));
  const Shape& x = ctx.input(1).shape;
  UCUDNN_RETURN_IF_ERROR(check_batch_norm_input(ctx, x));
  if (ctx.input(0).shape != x)
    return ctx.error("dY " + shape_to_string(ctx.input(0).shape) + " must have X's shape " + shape_to_string(x));
  UCUDNN_RETURN_IF_ERROR(check_channel_inputs(ctx, x[1], 2, {"scale", "saved_mean", "saved_inv_std"}));
  UCUDNN_ASSIGN_OR_RETURN(const bool relu, fused_relu(ctx));
  if (relu && !ctx.has_input(kForwardOutputInput))
    return ctx.error("activation 'Relu' needs the forward's output Y as input 5 (its mask)");
  if (!relu && ctx.has_input(kForwardOutputInput))
    return ctx.error("input 5 (the forward's Y) is read only with activation 'Relu'");
  if (!relu && ctx.num_outputs() > kResidualGradOutput)
    return ctx.error("output 3 (dZ) needs activation 'Relu'; without one dZ is dY itself");
  if (relu) UCUDNN_RETURN_IF_ERROR(check_like_x(ctx, kForwardOutputInput, "Y", x));
  ctx.set_output(0, DType::kFloat32, x);
  ctx.set_output(1, DType::kFloat32, Shape{x[1]});
  ctx.set_output(2, DType::kFloat32, Shape{x[1]});
  if (ctx.num_outputs() > kResidualGradOutput) ctx.set_output(kResidualGradOutput, DType::kFloat32, x);
  return Status::ok();
}

// Statistics (2 passes), then one multiply-add per element (and the residual's add, the Relu).
int64_t batch_norm_train_flops(const InferContext& ctx) {
  const int64_t fused = (ctx.has_input(kResidualInput) ? 1 : 0) + (ir::fused_activation(ctx.node()).empty() ? 0 : 1);
  return saturating_mul(int64_t{6} + fused, shape_numel(ctx.input(0).shape));
}

// Two reductions (dY, dY·x̂), then the update of dX (and the Relu's mask, applied in both passes).
int64_t batch_norm_grad_flops(const InferContext& ctx) {
  const int64_t fused = ir::fused_activation(ctx.node()).empty() ? 0 : 2;
  return saturating_mul(int64_t{8} + fused, shape_numel(ctx.input(0).shape));
}

// dX, dScale, dBias = BatchNormGrad(dY, X, scale, saved_mean, saved_inv_std), from the saved statistics
// of this very node; with a fused Relu the fused BatchNormGrad, which also reads Y and gives Z its dZ
// (Note [batch norm with its activation]). Only Y is differentiated: a gradient reaching another
// output is refused.
Status batch_norm_train_gradient(GradientContext& ctx) {
  static const char* const kOutputs[] = {"Y", "new_running_mean", "new_running_var", "saved_mean", "saved_inv_std"};
  for (size_t o = 1; o < 5; ++o)
    if (ctx.output_grad(o) != ir::kNoValue)
      return ctx.unsupported(std::string("a gradient flows into ") + kOutputs[o] + "; only Y is differentiated");
  const ir::ValueId dy = ctx.output_grad(0);
  const std::string activation = ir::fused_activation(ctx.node());
  if (!activation.empty() && activation != "Relu")
    return ctx.unsupported("no gradient through the fused activation '" + activation + "'");
  const bool relu = activation == "Relu";
  const bool normalized = ctx.needs_input_grad(0) || ctx.needs_input_grad(1) || ctx.needs_input_grad(2);
  const bool residual = ctx.needs_input_grad(kResidualInput);  // false when there is no Z
  if (dy == ir::kNoValue || !(normalized || residual)) return Status::ok();
  if (!normalized) {  // Z alone: dY through the Relu, as the unfused Relu's rule gives it
    ir::ValueId dz = dy;
    if (relu) {
      ir::Attributes attrs;
      attrs.set("activation", std::string("Relu"));
      UCUDNN_ASSIGN_OR_RETURN(dz, ctx.emit1(OpKind::kActivationGrad, {dy, ctx.output(0)}, std::move(attrs)));
    }
    return ctx.add_input_grad(kResidualInput, dz);
  }
  std::vector<ir::ValueId> inputs = {dy, ctx.input(0), ctx.input(1), ctx.output(3), ctx.output(4)};
  ir::Attributes attrs;
  if (relu) {
    inputs.push_back(ctx.output(0));
    attrs.set(ir::kFusedActivationAttr, activation);
  }
  const size_t outputs = relu && residual ? 4 : 3;
  UCUDNN_ASSIGN_OR_RETURN(std::vector<ir::ValueId> grads,
                          ctx.emit(OpKind::kBatchNormGrad, std::move(inputs), std::move(attrs), outputs));
  for (size_t i = 0; i < 3; ++i)
    if (ctx.needs_input_grad(i)) UCUDNN_RETURN_IF_ERROR(ctx.add_input_grad(i, grads[i]));
  if (residual) UCUDNN_RETURN_IF_ERROR(ctx.add_input_grad(kResidualInput, relu ? grads[kResidualGradOutput] : dy));
  return Status::ok();
}

}  // namespace

const OpDescriptor& describe_BatchNormTrain() {
  static const OpDescriptor d{.kind = OpKind::kBatchNormTrain,
                              .min_inputs = 5,
                              .max_inputs = 6,
                              .min_outputs = 5,
                              .max_outputs = 5,
                              .attrs = {attr_float("epsilon", 1e-5f), attr_float("momentum", 0.9f),
                                        attr_string("activation", "")},
                              .infer = infer_batch_norm_train,
                              .flops = batch_norm_train_flops,
                              .internal = true,
                              .gradient = batch_norm_train_gradient};
  return d;
}

const OpDescriptor& describe_BatchNormGrad() {
  static const OpDescriptor d{.kind = OpKind::kBatchNormGrad,
                              .min_inputs = 5,
                              .max_inputs = 6,
                              .min_outputs = 3,
                              .max_outputs = 4,
                              .attrs = {attr_string("activation", "")},
                              .infer = infer_batch_norm_grad,
                              .flops = batch_norm_grad_flops,
                              .internal = true};
  return d;
}

}  // namespace ucudnn
