// The descriptors of the ONNX loss ops, NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (opset 12 on).
// The importer lowers them (onnx_import/lowering/nll_loss.h).
#include <string>

#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {

// X [N, C, d...] float32, target [N, d...] int64 or int32, weight [C] float32 → loss [] ([N, d...] for
// reduction "none"), and SoftmaxCrossEntropyLoss's log_prob of X's shape.
Status loss_infer(InferContext& ctx) {
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(0, {DType::kFloat32}));
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(1, {DType::kInt64, DType::kInt32}));
  const Shape& x = ctx.input(0).shape;
  if (x.size() < 2) return ctx.error("input must have rank >= 2 ([N, C, d...]), got " + shape_to_string(x));
  Shape target = x;
  target.erase(target.begin() + 1);
  if (ctx.input(1).shape != target)
    return ctx.error("target " + shape_to_string(ctx.input(1).shape) + " must be the input's shape without the " +
                     "class axis, " + shape_to_string(target));
  if (ctx.has_input(2)) {
    UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(2, {DType::kFloat32}));
    if (ctx.input(2).shape != Shape{x[1]})
      return ctx.error("weight must have one value per class, [" + std::to_string(x[1]) + "], got " +
                       shape_to_string(ctx.input(2).shape));
  }
  const std::string& reduction = ctx.attrs().get_string("reduction");
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    return ctx.error("reduction '" + reduction + "' is not one of none, sum, mean");
  ctx.set_output(0, DType::kFloat32, reduction == "none" ? target : Shape{});
  if (ctx.num_outputs() > 1) ctx.set_output(1, DType::kFloat32, x);
  return Status::ok();
}

OpDescriptor loss_descriptor(OpKind kind, int max_outputs) {
  return OpDescriptor{.kind = kind,
                      .min_inputs = 2,
                      .max_inputs = 3,
                      .max_outputs = max_outputs,
                      .min_opset = 12,
                      .attrs = {attr_optional("ignore_index", ir::AttrType::kInt), attr_string("reduction", "mean")},
                      .infer = loss_infer};
}

}  // namespace

const OpDescriptor& describe_NegativeLogLikelihoodLoss() {
  static const OpDescriptor d = loss_descriptor(OpKind::kNegativeLogLikelihoodLoss, 1);
  return d;
}

const OpDescriptor& describe_SoftmaxCrossEntropyLoss() {
  static const OpDescriptor d = loss_descriptor(OpKind::kSoftmaxCrossEntropyLoss, 2);
  return d;
}

}  // namespace ucudnn
