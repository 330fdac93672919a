// Descriptor of FusedConvDepthwise (Note [pointwise-depthwise fusion], runtime/ir/fusion.h): a 1×1 Conv
// and the 3×3 depthwise Conv after it as one node, channels-last only. X [N, H, W, C], W [M, 1, 1, C],
// optional B [M], W_dw [M, R, S, 1], optional B_dw [M] → Y [N, OH, OW, M], OH and OW the depthwise's
// window over H and W (its `depthwise_strides` and `depthwise_pads`, no dilation). Made by
// optimizer/passes/fuse_conv_depthwise.cc only (internal); no gradient (inference only).
// FLOPs: the two convolutions', 2·N·H·W·M·C + 2·N·OH·OW·M·R·S.
#include <cstdint>

#include "runtime/core/bytes.h"
#include "runtime/ir/fusion.h"
#include "runtime/ir/layout.h"
#include "runtime/ops/op_descriptor.h"
#include "runtime/ops/window_geometry.h"

namespace ucudnn {

namespace {

Status infer_fused_conv_depthwise(InferContext& ctx) {
  for (size_t i = 0; i < ctx.num_inputs(); ++i)
    if (i <= 1 || i == ir::kDepthwiseWeightInput || ctx.has_input(i))
      UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(i, {DType::kFloat32}));
  if (!ir::is_channels_last(ctx.node())) return ctx.error("FusedConvDepthwise runs channels-last only");
  const Shape& x = ctx.input(0).shape;
  const Shape& w = ctx.input(1).shape;
  const Shape& w_dw = ctx.input(ir::kDepthwiseWeightInput).shape;
  if (x.size() != 4 || w.size() != 4 || w_dw.size() != 4)
    return ctx.error("X, W and W_dw must be 4-D ([N, H, W, C], [M, 1, 1, C], [M, R, S, 1])");
  const int64_t filters = w[0];
  if (w[1] != 1 || w[2] != 1 || w[3] != x[3])
    return ctx.error("W must be [M, 1, 1, " + std::to_string(x[3]) + "], got " + shape_to_string(w));
  if (w_dw[0] != filters || w_dw[3] != 1)
    return ctx.error("W_dw must be [" + std::to_string(filters) + ", R, S, 1], got " + shape_to_string(w_dw));
  for (size_t b : {size_t{2}, ir::kDepthwiseBiasInput})
    if (ctx.has_input(b) && ctx.input(b).shape != Shape{filters})
      return ctx.error("input " + std::to_string(b) + " (a bias) must have shape [" + std::to_string(filters) +
                       "], got " + shape_to_string(ctx.input(b).shape));
  ir::Attributes window;  // the depthwise's window, as a Conv's attributes
  window.set("strides", ctx.attrs().get_ints(ir::kDepthwiseStridesAttr));
  window.set("pads", ctx.attrs().get_ints(ir::kDepthwisePadsAttr));
  auto geometry = compute_window_geometry(window, {x[1], x[2]}, {w_dw[1], w_dw[2]}, /*ceil_mode=*/false);
  if (!geometry) return ctx.error("the depthwise window: " + geometry.status().message());
  ctx.set_output(0, DType::kFloat32, {x[0], geometry->output[0], geometry->output[1], filters});
  return Status::ok();
}

int64_t fused_conv_depthwise_flops(const InferContext& ctx) {
  const Shape& x = ctx.input(0).shape;
  const Shape& w_dw = ctx.input(ir::kDepthwiseWeightInput).shape;
  const int64_t pointwise = saturating_mul(saturating_mul(int64_t{2}, shape_numel(x)), ctx.input(1).shape[0]);
  const int64_t depthwise =
      saturating_mul(saturating_mul(int64_t{2}, shape_numel(ctx.output(0).shape)), w_dw[1] * w_dw[2]);
  return pointwise > INT64_MAX - depthwise ? INT64_MAX : pointwise + depthwise;
}

}  // namespace

const OpDescriptor& describe_FusedConvDepthwise() {
  static const OpDescriptor d{
      .kind = OpKind::kFusedConvDepthwise,
      .min_inputs = 4,
      .max_inputs = 5,
      .min_opset = 1,
      .attrs = {attr_int(ir::kChannelsLastAttr, 1), attr_required(ir::kDepthwiseStridesAttr, ir::AttrType::kInts),
                attr_required(ir::kDepthwisePadsAttr, ir::AttrType::kInts),
                attr_optional(ir::kFusedActivationAttr, ir::AttrType::kString),
                attr_optional(ir::kFusedActivationMinAttr, ir::AttrType::kFloat),
                attr_optional(ir::kFusedActivationMaxAttr, ir::AttrType::kFloat),
                attr_optional(ir::kDepthwiseActivationAttr, ir::AttrType::kString),
                attr_optional(ir::kDepthwiseActivationMinAttr, ir::AttrType::kFloat),
                attr_optional(ir::kDepthwiseActivationMaxAttr, ir::AttrType::kFloat)},
      .infer = infer_fused_conv_depthwise,
      .flops = fused_conv_depthwise_flops,
      .internal = true};
  return d;
}

}  // namespace ucudnn
