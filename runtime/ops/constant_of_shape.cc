// Descriptor of ConstantOfShape: shape (int64 [r], constant) → Y [shape...] of the `value` attribute's
// dtype, every element that value (a one-element tensor; float32 0 when absent). PyTorch writes it,
// e.g., in the pads it computes for a reflect padding. No backend has a kernel of it: the importer folds
// it, or lowers it into an Expand (onnx_import/lowering/constant_of_shape.h; Note [lowered ops], lowered_ops.h).
#include <string>
#include <vector>

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

}  // namespace

const OpDescriptor& describe_ConstantOfShape() {
  static const OpDescriptor d{.kind = OpKind::kConstantOfShape,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .min_opset = 9,
                              .attrs = {attr_optional("value", ir::AttrType::kTensor)},
                              .infer = constant_of_shape_infer};
  return d;
}

}  // namespace ucudnn
