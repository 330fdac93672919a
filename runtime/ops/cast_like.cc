// Descriptor of CastLike(input, target_type) (opset 15): a Cast to target_type's dtype, whose values are not
// read. No backend runs it: the importer lowers it into that Cast (onnx_import/lowering/cast_like.h).
#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {

// The Cast it becomes decides what is supported: its own shape rule runs on the node built here.
Status cast_like_infer(InferContext& ctx) {
  ir::Node cast = ctx.node();
  cast.op = OpKind::kCast;
  cast.inputs.resize(1);
  cast.attrs.set("to", static_cast<int64_t>(dtype_to_onnx(ctx.input(1).dtype)));
  if (!cast.attrs.has("saturate")) cast.attrs.set("saturate", int64_t{1});
  InferContext inner(cast, {ctx.input(0)});
  UCUDNN_RETURN_IF_ERROR(op_descriptor(OpKind::kCast).infer(inner));
  ctx.set_output(0, inner.output(0).dtype, inner.output(0).shape);
  return Status::ok();
}

}  // namespace

const OpDescriptor& describe_CastLike() {
  static const OpDescriptor d{.kind = OpKind::kCastLike,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .min_opset = 15,
                              .attrs = {attr_int("saturate", 1)},
                              .infer = cast_like_infer};
  return d;
}

}  // namespace ucudnn
