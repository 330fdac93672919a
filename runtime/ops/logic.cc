// Descriptors of the comparisons (Equal, Less, Greater, LessOrEqual, GreaterOrEqual: two operands of one
// dtype, float32, int32 or int64, and bool for Equal → bool), the logical ops (Not; And, Or, Xor on bool)
// and Where (bool condition, X and Y of one dtype → that dtype), all with numpy broadcasting; and the tests
// of float32 elements IsNaN and IsInf (bool results of X's shape). Exporters
// write them in shape arithmetic (a ViT's class token: Where(Equal(shape, -1), 1, shape)), which the
// importer folds, and in masks that run. No gradient rules: their outputs are bool or select.
#include <string>
#include <utility>

#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {

Status same_dtype(InferContext& ctx, size_t a, size_t b) {
  if (ctx.input(a).dtype != ctx.input(b).dtype)
    return ctx.error(std::string("inputs ") + std::to_string(a) + " and " + std::to_string(b) +
                     " must have the same dtype, got " + dtype_name(ctx.input(a).dtype) + " and " +
                     dtype_name(ctx.input(b).dtype));
  return Status::ok();
}

Status compare_infer(InferContext& ctx) {
  if (ctx.node().op == OpKind::kEqual) {
    UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(0, {DType::kFloat32, DType::kInt32, DType::kInt64, DType::kBool}));
  } else {
    UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(0, {DType::kFloat32, DType::kInt32, DType::kInt64}));
  }
  UCUDNN_RETURN_IF_ERROR(same_dtype(ctx, 0, 1));
  return ctx.set_broadcast_output(DType::kBool);
}

Status logic_infer(InferContext& ctx) {
  for (size_t i = 0; i < ctx.num_inputs(); ++i) UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(i, {DType::kBool}));
  return ctx.set_broadcast_output(DType::kBool);
}

Status where_infer(InferContext& ctx) {
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(0, {DType::kBool}));
  UCUDNN_RETURN_IF_ERROR(same_dtype(ctx, 1, 2));
  return ctx.set_broadcast_output(ctx.input(1).dtype);
}

// IsNaN, IsInf: a float32 X's elements tested, bool Y of X's shape.
Status float_test_infer(InferContext& ctx) {
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(0, {DType::kFloat32}));
  ctx.set_output(0, DType::kBool, ctx.input(0).shape);
  return Status::ok();
}

int64_t one_per_element(const InferContext& ctx) { return shape_numel(ctx.output(0).shape); }

}  // namespace

#define UCUDNN_LOGIC_OP(name, inputs, first_opset, rule)                                         \
  const OpDescriptor& describe_##name() {                                                        \
    static const OpDescriptor d{.kind = OpKind::k##name,                                         \
                                .min_inputs = inputs,                                            \
                                .max_inputs = inputs,                                            \
                                .min_opset = first_opset,                                        \
                                .infer = rule,                                                   \
                                .flops = one_per_element};                                       \
    return d;                                                                                    \
  }
UCUDNN_LOGIC_OP(Equal, 2, 1, compare_infer)
UCUDNN_LOGIC_OP(Less, 2, 1, compare_infer)
UCUDNN_LOGIC_OP(Greater, 2, 1, compare_infer)
UCUDNN_LOGIC_OP(LessOrEqual, 2, 12, compare_infer)
UCUDNN_LOGIC_OP(GreaterOrEqual, 2, 12, compare_infer)
UCUDNN_LOGIC_OP(Not, 1, 1, logic_infer)
UCUDNN_LOGIC_OP(And, 2, 1, logic_infer)
UCUDNN_LOGIC_OP(Or, 2, 1, logic_infer)
UCUDNN_LOGIC_OP(Xor, 2, 1, logic_infer)
UCUDNN_LOGIC_OP(Where, 3, 9, where_infer)
UCUDNN_LOGIC_OP(IsNaN, 1, 9, float_test_infer)
#undef UCUDNN_LOGIC_OP

// IsInf: which infinities count (both by default).
const OpDescriptor& describe_IsInf() {
  static const OpDescriptor d{.kind = OpKind::kIsInf,
                              .min_opset = 10,
                              .attrs = {attr_int("detect_negative", 1), attr_int("detect_positive", 1)},
                              .infer = float_test_infer,
                              .flops = one_per_element};
  return d;
}

}  // namespace ucudnn
