// Descriptors and lowering of DepthToSpace and SpaceToDepth (depth_to_space.h). With b the blocksize and X
// [N, C, H, W] of any dtype, as ONNX's reference computes them:
//   DepthToSpace DCR: [N, b, b, C/b², H, W] → perm (0, 3, 4, 1, 5, 2) → [N, C/b², H·b, W·b]
//   DepthToSpace CRD: [N, C/b², b, b, H, W] → perm (0, 1, 4, 2, 5, 3) → [N, C/b², H·b, W·b]
//   SpaceToDepth:     [N, C, H/b, b, W/b, b] → perm (0, 3, 5, 1, 2, 4) → [N, C·b², H/b, W/b]
#include "runtime/ops/depth_to_space.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "runtime/ops/lowering.h"
#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {

bool crd_mode(const ir::Node& node) {
  return node.op == OpKind::kDepthToSpace && node.attrs.get_string("mode") == "CRD";
}

Status depth_to_space_infer(InferContext& ctx) {
  const Shape& in = ctx.input(0).shape;
  if (in.size() != 4) return ctx.error("input must be 4-D [N, C, H, W], got " + shape_to_string(in));
  const int64_t b = ctx.attrs().get_int("blocksize");
  if (b < 1) return ctx.error("blocksize must be at least 1, got " + std::to_string(b));
  const bool to_space = ctx.node().op == OpKind::kDepthToSpace;
  if (to_space) {
    const std::string& mode = ctx.attrs().get_string("mode");
    if (mode != "DCR" && mode != "CRD") return ctx.error("mode must be DCR or CRD, got '" + mode + "'");
    if (in[1] % (b * b) != 0)
      return ctx.error("channels " + std::to_string(in[1]) + " are not a multiple of blocksize² " +
                       std::to_string(b * b));
    ctx.set_output(0, ctx.input(0).dtype, {in[0], in[1] / (b * b), in[2] * b, in[3] * b});
  } else {
    if (in[2] % b != 0 || in[3] % b != 0)
      return ctx.error("height and width " + std::to_string(in[2]) + "×" + std::to_string(in[3]) +
                       " are not multiples of blocksize " + std::to_string(b));
    ctx.set_output(0, ctx.input(0).dtype, {in[0], in[1] * b * b, in[2] / b, in[3] / b});
  }
  return Status::ok();
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

const OpDescriptor& describe_DepthToSpace() {
  static const OpDescriptor d{.kind = OpKind::kDepthToSpace,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .min_opset = 1,
                              .attrs = {attr_required("blocksize", ir::AttrType::kInt), attr_string("mode", "DCR")},
                              .infer = depth_to_space_infer};
  return d;
}

const OpDescriptor& describe_SpaceToDepth() {
  static const OpDescriptor d{.kind = OpKind::kSpaceToDepth,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .min_opset = 1,
                              .attrs = {attr_required("blocksize", ir::AttrType::kInt)},
                              .infer = depth_to_space_infer};
  return d;
}

Status lower_depth_to_space(ir::Graph& graph) {
  UCUDNN_RETURN_IF_ERROR(lower_each(graph, OpKind::kDepthToSpace, lower_one, "DepthToSpace"));
  return lower_each(graph, OpKind::kSpaceToDepth, lower_one, "SpaceToDepth");
}

}  // namespace ucudnn
