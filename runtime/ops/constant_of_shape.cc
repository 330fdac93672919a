// Descriptor of ConstantOfShape: shape (int64 [r], constant) → Y [shape...] of the `value` attribute's
// dtype, every element that value (a one-element tensor; float32 0 when absent). PyTorch writes it,
// e.g., in the pads it computes for a reflect padding. No backend has a kernel of it: the importer folds
// it, or lower_constants_of_shape makes it an Expand (Note [lowered ops], lowering.h).
#include "runtime/ops/constant_of_shape.h"

#include <algorithm>
#include <string>
#include <vector>

#include "runtime/ops/lowering.h"
#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {

Status constant_of_shape_infer(InferContext& ctx) {
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(0, {DType::kInt64}));
  UCUDNN_RETURN_IF_ERROR(ctx.expect_constant(0, "shape"));
  if (ctx.input(0).shape.size() != 1)
    return ctx.error("shape must be 1-D, got " + shape_to_string(ctx.input(0).shape));
  UCUDNN_ASSIGN_OR_RETURN(const std::vector<int64_t> shape, ctx.input(0).constant->to_int64_vector());
  for (int64_t d : shape)
    if (d < 0) return ctx.error("shape " + shape_to_string(shape) + " has a negative dimension");
  DType dtype = DType::kFloat32;
  if (ctx.attrs().has("value")) {
    const Tensor& value = ctx.attrs().get_tensor("value");
    if (value.numel() != 1 || value.raw() == nullptr)
      return ctx.error("attribute 'value' must hold one element, it holds " + std::to_string(value.numel()));
    dtype = value.dtype();
  }
  ctx.set_output(0, dtype, Shape(shape.begin(), shape.end()));
  return Status::ok();
}

Status lower_one(ir::Graph& graph, const ir::Node& node, std::vector<ir::Node>& out) {
  LoweringBuilder build(graph, node, out, std::max(node.opset, 8));
  const ir::Value y = graph.value(node.outputs[0]);  // a copy: adding values moves them
  build.emit(OpKind::kExpand, "", {build.constant("value", constant_of_shape_value(node)), node.inputs[0]},
             y.dtype, y.shape, node.outputs[0]);
  return Status::ok();
}

}  // namespace

Tensor constant_of_shape_value(const ir::Node& node) {
  if (node.attrs.has("value")) return node.attrs.get_tensor("value").reshaped({});
  const float zero = 0.0f;
  return Tensor::from_floats({}, {&zero, 1});
}

const OpDescriptor& describe_ConstantOfShape() {
  static const OpDescriptor d{.kind = OpKind::kConstantOfShape,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .min_opset = 9,
                              .attrs = {attr_optional("value", ir::AttrType::kTensor)},
                              .infer = constant_of_shape_infer};
  return d;
}

Status lower_constants_of_shape(ir::Graph& graph) {
  return lower_each(graph, OpKind::kConstantOfShape, lower_one, "ConstantOfShape");
}

}  // namespace ucudnn
