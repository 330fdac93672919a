// The lowering of DepthToSpace and SpaceToDepth (depth_to_space.h). With b the blocksize and X
// [N, C, H, W] of any dtype, as ONNX's reference computes them:
//   DepthToSpace DCR: [N, b, b, C/b², H, W] → perm (0, 3, 4, 1, 5, 2) → [N, C/b², H·b, W·b]
//   DepthToSpace CRD: [N, C/b², b, b, H, W] → perm (0, 1, 4, 2, 5, 3) → [N, C/b², H·b, W·b]
//   SpaceToDepth:     [N, C, H/b, b, W/b, b] → perm (0, 3, 5, 1, 2, 4) → [N, C·b², H/b, W/b]
#include "onnx_import/lowering/depth_to_space.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "onnx_import/lowering/lowering_builder.h"
#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {

bool crd_mode(const ir::Node& node) {
  return node.op == OpKind::kDepthToSpace && node.attrs.get_string("mode") == "CRD";
}

Status lower_one(ir::Graph& graph, const ir::Node& node, std::vector<ir::Node>& out) {
  const ir::Value x = graph.value(node.inputs[0]);  // a copy: adding values moves them
  const Shape& in = x.shape;
  const int64_t b = node.attrs.get_int("blocksize");
  const int64_t n = in[0], c = in[1], h = in[2], w = in[3];
  Shape split;
  std::vector<int64_t> perm;
  if (node.op == OpKind::kSpaceToDepth) {
    split = {n, c, h / b, b, w / b, b};
    perm = {0, 3, 5, 1, 2, 4};
  } else if (crd_mode(node)) {
    split = {n, c / (b * b), b, b, h, w};
    perm = {0, 1, 4, 2, 5, 3};
  } else {
    split = {n, b, b, c / (b * b), h, w};
    perm = {0, 3, 4, 1, 5, 2};
  }
  Shape permuted;
  for (int64_t p : perm) permuted.push_back(split[static_cast<size_t>(p)]);
  LoweringBuilder build(graph, node, out, std::max(node.opset, 13));
  const ir::ValueId blocks =
      build.emit(OpKind::kReshape, "split", {node.inputs[0], build.int64s("split_shape", split)}, x.dtype, split);
  ir::Attributes transpose;
  transpose.set("perm", perm);
  const ir::ValueId moved = build.emit(OpKind::kTranspose, "move", {blocks}, x.dtype, permuted, ir::kNoValue,
                                       std::move(transpose));
  const Shape y = graph.value(node.outputs[0]).shape;
  build.emit(OpKind::kReshape, "merge", {moved, build.int64s("merged_shape", y)}, x.dtype, y, node.outputs[0]);
  return Status::ok();
}

}  // namespace

Status lower_depth_to_space(ir::Graph& graph) {
  UCUDNN_RETURN_IF_ERROR(lower_each(graph, OpKind::kDepthToSpace, lower_one, "DepthToSpace"));
  return lower_each(graph, OpKind::kSpaceToDepth, lower_one, "SpaceToDepth");
}

}  // namespace ucudnn
