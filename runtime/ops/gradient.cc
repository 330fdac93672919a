// GradientContext's helpers (runtime/ops/gradient.h); the context itself is training/autodiff.cc's.
#include "runtime/ops/gradient.h"

namespace ucudnn {

Status GradientContext::unsupported(const std::string& why) const {
  return Status(StatusCode::kUnsupported, "cannot train through " + node().describe() + ": " + why);
}

Expected<ir::ValueId> GradientContext::emit1(OpKind op, std::vector<ir::ValueId> inputs, ir::Attributes attrs) {
  UCUDNN_ASSIGN_OR_RETURN(std::vector<ir::ValueId> outputs, emit(op, std::move(inputs), std::move(attrs), 1));
  return outputs.front();
}

ir::ValueId GradientContext::int64_constant(const std::vector<int64_t>& values, const std::string& name_hint) {
  return add_constant(Tensor::from_int64s(Shape{static_cast<int64_t>(values.size())}, values), name_hint);
}

ir::ValueId GradientContext::float_constant(float value, const std::string& name_hint) {
  return add_constant(Tensor::from_floats(Shape{}, std::span<const float>(&value, 1)), name_hint);
}

Expected<ir::ValueId> GradientContext::reduce_to_shape(ir::ValueId grad, const Shape& target) {
  const Shape g = shape_of(grad);
  if (g == target) return grad;
  if (target.size() > g.size())
    return unsupported("cannot reduce a gradient of shape " + shape_to_string(g) + " to " + shape_to_string(target));
  const size_t lead = g.size() - target.size();
  std::vector<int64_t> axes;
  for (size_t d = 0; d < g.size(); ++d) {
    if (d < lead) {
      axes.push_back(static_cast<int64_t>(d));
    } else if (target[d - lead] != g[d]) {
      if (target[d - lead] != 1)
        return unsupported("shape " + shape_to_string(target) + " does not broadcast to " + shape_to_string(g));
      axes.push_back(static_cast<int64_t>(d));
    }
  }
  ir::Attributes attrs;
  attrs.set("keepdims", int64_t{1});
  UCUDNN_ASSIGN_OR_RETURN(ir::ValueId summed,
                          emit1(OpKind::kReduceSum, {grad, int64_constant(axes, "axes")}, std::move(attrs)));
  return reshape(summed, target);
}

Expected<ir::ValueId> GradientContext::reshape(ir::ValueId v, const Shape& shape) {
  if (value(v).shape == shape) return v;
  return emit1(OpKind::kReshape, {v, int64_constant(std::vector<int64_t>(shape.begin(), shape.end()), "shape")});
}

}  // namespace ucudnn
