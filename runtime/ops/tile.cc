// Descriptor and lowering of Tile (tile.h): X [d0, ..., dk] of any dtype, repeats (int64 [k+1], a
// constant) → Y [d0·r0, ..., dk·rk]. Interleaving a 1 before every axis makes the repeats a broadcast:
//   X → Reshape [1, d0, 1, d1, ...] → Expand [r0, d0, r1, d1, ...] → Reshape [r0·d0, r1·d1, ...],
// which is Y: index (i, j) of the expanded pair is i·d + j of the tiled axis.
#include "runtime/ops/tile.h"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "runtime/ops/lowering.h"
#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {

Status tile_infer(InferContext& ctx) {
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(1, {DType::kInt64}));
  UCUDNN_RETURN_IF_ERROR(ctx.expect_constant(1, "repeats"));
  const Shape& in = ctx.input(0).shape;
  UCUDNN_ASSIGN_OR_RETURN(const std::vector<int64_t> repeats, ctx.input(1).constant->to_int64_vector());
  if (repeats.size() != in.size())
    return ctx.error("repeats has " + std::to_string(repeats.size()) + " values; X has rank " +
                     std::to_string(in.size()));
  Shape out;
  for (size_t d = 0; d < in.size(); ++d) {
    if (repeats[d] < 0) return ctx.error("repeats " + shape_to_string(repeats) + " has a negative value");
    if (in[d] != 0 && repeats[d] > std::numeric_limits<int64_t>::max() / in[d])
      return ctx.error("the tiled dimension " + std::to_string(d) + " overflows int64");
    out.push_back(in[d] * repeats[d]);
  }
  ctx.set_output(0, ctx.input(0).dtype, std::move(out));
  return Status::ok();
}

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

const OpDescriptor& describe_Tile() {
  static const OpDescriptor d{.kind = OpKind::kTile,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .min_opset = 6,
                              .infer = tile_infer};
  return d;
}

Status lower_tiles(ir::Graph& graph) { return lower_each(graph, OpKind::kTile, lower_one, "Tile"); }

}  // namespace ucudnn
