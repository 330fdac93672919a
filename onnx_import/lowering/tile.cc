// The lowering of Tile (tile.h): X [d0, ..., dk] repeated [r0, ..., rk] times. Interleaving a 1 before every
// axis makes the repeats a broadcast:
//   X → Reshape [1, d0, 1, d1, ...] → Expand [r0, d0, r1, d1, ...] → Reshape [r0·d0, r1·d1, ...],
// which is Y: index (i, j) of the expanded pair is i·d + j of the tiled axis.
#include "onnx_import/lowering/tile.h"

#include <algorithm>
#include <vector>

#include "onnx_import/lowering/lowering_builder.h"
#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {

Status lower_one(ir::Graph& graph, const ir::Node& node, std::vector<ir::Node>& out) {
  const ir::Value x = graph.value(node.inputs[0]);  // copies: adding values moves them
  const std::vector<int64_t> repeats = graph.value(node.inputs[1]).constant->to_int64_vector().value();
  const Shape y = graph.value(node.outputs[0]).shape;
  Shape interleaved, expanded;
  for (size_t d = 0; d < x.shape.size(); ++d) {
    interleaved.insert(interleaved.end(), {1, x.shape[d]});
    expanded.insert(expanded.end(), {repeats[d], x.shape[d]});
  }
  LoweringBuilder build(graph, node, out, std::max(node.opset, 13));
  const ir::ValueId spread = build.emit(OpKind::kReshape, "interleave",
                                        {node.inputs[0], build.int64s("interleaved_shape", interleaved)}, x.dtype,
                                        interleaved);
  const ir::ValueId copies =
      build.emit(OpKind::kExpand, "repeat", {spread, build.int64s("repeated_shape", expanded)}, x.dtype, expanded);
  build.emit(OpKind::kReshape, "merge", {copies, build.int64s("tiled_shape", y)}, x.dtype, y, node.outputs[0]);
  return Status::ok();
}

}  // namespace

Status lower_tiles(ir::Graph& graph) { return lower_each(graph, OpKind::kTile, lower_one, "Tile"); }

}  // namespace ucudnn
