// Descriptors of the broadcasting binary ops Add, Sub, Mul, Div (opset >= 7
// form: numpy multidirectional broadcasting, no `broadcast` attribute).
// Both inputs must have the same dtype: float32 for math, int64/int32 because
// exporters compute shapes with them (Shape → Gather → Mul → Reshape).
#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {

Status binary_infer(InferContext& ctx) {
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(0, {DType::kFloat32, DType::kInt64, DType::kInt32}));
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(1, {DType::kFloat32, DType::kInt64, DType::kInt32}));
  const DType dtype = ctx.input(0).dtype;
  if (ctx.input(1).dtype != dtype)
    return ctx.error(std::string("inputs must have the same dtype, got ") + dtype_name(dtype) + " and " +
                     dtype_name(ctx.input(1).dtype));
  Shape out;
  if (!broadcast_shapes(ctx.input(0).shape, ctx.input(1).shape, &out))
    return ctx.error("shapes " + shape_to_string(ctx.input(0).shape) + " and " +
                     shape_to_string(ctx.input(1).shape) + " are not broadcastable");
  ctx.set_output(0, dtype, std::move(out));
  return Status::ok();
}

int64_t one_flop_per_element(const InferContext& ctx) { return shape_numel(ctx.output(0).shape); }

OpDescriptor binary_descriptor(OpKind kind) {
  return OpDescriptor{.kind = kind,
                      .min_inputs = 2,
                      .max_inputs = 2,
                      .min_opset = 7,
                      .infer = binary_infer,
                      .flops = one_flop_per_element};
}

}  // namespace

const OpDescriptor& describe_Add() {
  static const OpDescriptor d = binary_descriptor(OpKind::kAdd);
  return d;
}
const OpDescriptor& describe_Sub() {
  static const OpDescriptor d = binary_descriptor(OpKind::kSub);
  return d;
}
const OpDescriptor& describe_Mul() {
  static const OpDescriptor d = binary_descriptor(OpKind::kMul);
  return d;
}
const OpDescriptor& describe_Div() {
  static const OpDescriptor d = binary_descriptor(OpKind::kDiv);
  return d;
}

}  // namespace ucudnn
