// Descriptors of Max and Min: the elementwise largest (smallest) of any number of broadcasting inputs, all
// float32, all int32 or all int64. The kernels take two operands; the importer lowers other counts
// (onnx_import/lowering/max_min.h). A pair's gradient goes to the operand that won (a tie: the first).
#include <string>

#include "runtime/ops/gradient.h"
#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {

constexpr int kMaxOperands = 1 << 16;

Status max_min_infer(InferContext& ctx) {
  const DType dtype = ctx.input(0).dtype;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(i, {DType::kFloat32, DType::kInt32, DType::kInt64}));
    if (ctx.input(i).dtype != dtype)
      return ctx.error("input " + std::to_string(i) + " is " + dtype_name(ctx.input(i).dtype) + ", input 0 " +
                       dtype_name(dtype) + ": every input must have the same dtype");
  }
  return ctx.set_broadcast_output(dtype);
}

int64_t one_flop_per_element(const InferContext& ctx) { return shape_numel(ctx.output(0).shape); }

// Y = Max(A, B) (the pairs the kernels run): dY goes to A where A >= B, else to B (Min: A <= B), each
// summed back to its operand's shape; a tie gives it all to A.
Status max_min_gradient(GradientContext& ctx) {
  const ir::ValueId dy = ctx.output_grad(0);
  if (dy == ir::kNoValue || (!ctx.needs_input_grad(0) && !ctx.needs_input_grad(1))) return Status::ok();
  if (ctx.node().inputs.size() != 2)
    return ctx.unsupported("a gradient of Max or Min of other than two inputs (the importer lowers them into pairs)");
  const OpKind test = ctx.node().op == OpKind::kMax ? OpKind::kGreaterOrEqual : OpKind::kLessOrEqual;
  UCUDNN_ASSIGN_OR_RETURN(ir::ValueId a_wins, ctx.emit1(test, {ctx.input(0), ctx.input(1)}));
  const ir::ValueId zero = ctx.float_constant(0.0f, "zero");
  for (size_t i = 0; i < 2; ++i) {
    if (!ctx.needs_input_grad(i)) continue;
    const ir::ValueId taken = i == 0 ? dy : zero, other = i == 0 ? zero : dy;
    UCUDNN_ASSIGN_OR_RETURN(ir::ValueId grad, ctx.emit1(OpKind::kWhere, {a_wins, taken, other}));
    const Shape target = ctx.value(ctx.input(i)).shape;  // a copy: emitting nodes may move the graph's values
    UCUDNN_ASSIGN_OR_RETURN(ir::ValueId reduced, ctx.reduce_to_shape(grad, target));
    UCUDNN_RETURN_IF_ERROR(ctx.add_input_grad(i, reduced));
  }
  return Status::ok();
}

OpDescriptor max_min_descriptor(OpKind kind) {
  return OpDescriptor{.kind = kind,
                      .min_inputs = 1,
                      .max_inputs = kMaxOperands,
                      .min_opset = 1,
                      .infer = max_min_infer,
                      .flops = one_flop_per_element,
                      .gradient = max_min_gradient};
}

}  // namespace

const OpDescriptor& describe_Max() {
  static const OpDescriptor d = max_min_descriptor(OpKind::kMax);
  return d;
}

const OpDescriptor& describe_Min() {
  static const OpDescriptor d = max_min_descriptor(OpKind::kMin);
  return d;
}

}  // namespace ucudnn
