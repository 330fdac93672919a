// The lowering of CastLike into a Cast (cast_like.h).
#include "onnx_import/lowering/cast_like.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "onnx_import/lowering/lowering_builder.h"
#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {

Status lower_one(ir::Graph& graph, const ir::Node& node, std::vector<ir::Node>& out) {
  LoweringBuilder build(graph, node, out, std::max(node.opset, 13));
  const ir::ValueId y = node.outputs[0];
  ir::Attributes attrs;
  attrs.set("to", static_cast<int64_t>(dtype_to_onnx(graph.value(y).dtype)));
  build.emit(OpKind::kCast, "", {node.inputs[0]}, graph.value(y).dtype, graph.value(y).shape, y, std::move(attrs));
  return Status::ok();
}

}  // namespace

Status lower_cast_likes(ir::Graph& graph) { return lower_each(graph, OpKind::kCastLike, lower_one, "CastLike"); }

}  // namespace ucudnn
