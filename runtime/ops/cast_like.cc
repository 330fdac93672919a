// Descriptor and lowering of CastLike (cast_like.h).
#include "runtime/ops/cast_like.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "runtime/ops/lowering.h"
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

Status lower_one(ir::Graph& graph, const ir::Node& node, std::vector<ir::Node>& out) {
  LoweringBuilder build(graph, node, out, std::max(node.opset, 13));
  const ir::ValueId y = node.outputs[0];
  ir::Attributes attrs;
  attrs.set("to", static_cast<int64_t>(dtype_to_onnx(graph.value(y).dtype)));
  build.emit(OpKind::kCast, "", {node.inputs[0]}, graph.value(y).dtype, graph.value(y).shape, y, std::move(attrs));
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

Status lower_cast_likes(ir::Graph& graph) { return lower_each(graph, OpKind::kCastLike, lower_one, "CastLike"); }

}  // namespace ucudnn
