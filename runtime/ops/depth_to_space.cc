// Descriptors of DepthToSpace and SpaceToDepth: X [N, C, H, W] of any dtype → [N, C/b², H·b, W·b] and
// [N, C·b², H/b, W/b] (b the blocksize). The importer lowers both into Reshape → Transpose → Reshape
// (onnx_import/lowering/depth_to_space.h).
#include <string>

#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {

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

}  // namespace ucudnn
