// NormalizationLowering (normalization_lowering.h).
#include "onnx_import/lowering/normalization_lowering.h"

#include <utility>

#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

Status NormalizationLowering::run(ir::ValueId x, const std::vector<int64_t>& axes, float epsilon, ir::ValueId scale,
                                  ir::ValueId bias, ir::ValueId y, EpsilonAt epsilon_at) {
  const Shape x_shape = graph_.value(x).shape;  // copies: add_value moves the values
  Shape stats = x_shape;
  for (int64_t a : axes) stats[static_cast<size_t>(a)] = 1;
  const ir::ValueId axes_value = int64s("axes", axes);
  const ir::ValueId epsilon_value = build_.constant("epsilon", Tensor::from_floats(Shape{}, {&epsilon, 1}));

  const ir::ValueId mean = emit(OpKind::kReduceMean, "mean", {x, axes_value}, stats, output(1));
  const ir::ValueId centered = emit(OpKind::kSub, "centered", {x, mean}, x_shape);
  const ir::ValueId square = emit(OpKind::kMul, "square", {centered, centered}, x_shape);
  const ir::ValueId variance = emit(OpKind::kReduceMean, "variance", {square, axes_value}, stats);
  ir::ValueId deviation;
  if (epsilon_at == EpsilonAt::kUnderSqrt) {
    const ir::ValueId shifted = emit(OpKind::kAdd, "variance_epsilon", {variance, epsilon_value}, stats);
    deviation = emit(OpKind::kSqrt, "deviation", {shifted}, stats);
  } else {
    const ir::ValueId root = emit(OpKind::kSqrt, "root", {variance}, stats);
    deviation = emit(OpKind::kAdd, "deviation", {root, epsilon_value}, stats);
  }
  const bool has_scale = scale != ir::kNoValue, has_bias = bias != ir::kNoValue;
  ir::ValueId last = emit(OpKind::kDiv, "normalized", {centered, deviation}, x_shape,
                          has_scale || has_bias ? ir::kNoValue : y);
  if (has_scale) last = emit(OpKind::kMul, "scaled", {last, scale}, x_shape, has_bias ? ir::kNoValue : y);
  if (has_bias) emit(OpKind::kAdd, "biased", {last, bias}, x_shape, y);
  if (output(2) != ir::kNoValue) emit(OpKind::kReciprocal, "inv_std_dev", {deviation}, stats, output(2));
  return Status::ok();
}

ir::ValueId NormalizationLowering::emit(OpKind op, const std::string& what, std::vector<ir::ValueId> inputs,
                                        const Shape& shape, ir::ValueId into) {
  return build_.emit(op, what, std::move(inputs), DType::kFloat32, shape, into);
}

ir::ValueId NormalizationLowering::intermediate(const std::string& what, const Shape& shape) {
  return build_.intermediate(what, DType::kFloat32, shape);
}

ir::ValueId NormalizationLowering::int64s(const std::string& what, const std::vector<int64_t>& values) {
  return build_.int64s(what, values);
}

}  // namespace ucudnn
