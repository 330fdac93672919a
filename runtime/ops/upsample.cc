// Descriptor and lowering of Upsample (upsample.h): X → Y with dims floor(d · scale), scales from the
// `scales` attribute (opset 7) or a constant second input (opset 9). Its output index i reads source
// coordinate i / scale (Resize's "asymmetric" transformation): mode "nearest" takes the floor of it
// (np.repeat for integer scales, ONNX's reference), "linear" interpolates, as ONNX Runtime does.
#include "runtime/ops/upsample.h"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "runtime/ops/lowering.h"
#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {

// The node's scales: the attribute (opset 7) or the constant input (opset 9).
Expected<std::vector<float>> upsample_scales(const ir::Node& node, const Tensor* input) {
  if (node.opset < 9) {
    if (!node.attrs.has("scales")) return invalid_model("attribute 'scales' is missing");
    return node.attrs.get_floats("scales");
  }
  if (input == nullptr) return invalid_model("input 'scales' is missing");
  if (input->dtype() != DType::kFloat32) return invalid_model("input 'scales' must be float32");
  return std::vector<float>(input->data<float>(), input->data<float>() + input->numel());
}

Status upsample_infer(InferContext& ctx) {
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(0, {DType::kFloat32}));
  const std::string& mode = ctx.attrs().get_string("mode");
  if (mode != "nearest" && mode != "linear") return ctx.error("mode must be nearest or linear, got '" + mode + "'");
  if (ctx.opset() >= 9) UCUDNN_RETURN_IF_ERROR(ctx.expect_constant(1, "scales"));
  auto scales = upsample_scales(ctx.node(), ctx.has_input(1) ? ctx.input(1).constant : nullptr);
  if (!scales) return ctx.error(scales.status().message());
  const Shape& in = ctx.input(0).shape;
  if (scales->size() != in.size())
    return ctx.error("scales has " + std::to_string(scales->size()) + " values; X has rank " +
                     std::to_string(in.size()));
  Shape out;
  for (size_t d = 0; d < in.size(); ++d) {
    const float s = (*scales)[d];
    if (!(s >= 1.0f) || !std::isfinite(s))
      return ctx.error("scale " + std::to_string(s) + " must be a finite number of at least 1");
    out.push_back(static_cast<int64_t>(std::floor(static_cast<double>(in[d]) * s)));
  }
  ctx.set_output(0, DType::kFloat32, std::move(out));
  return Status::ok();
}

Status lower_one(ir::Graph& graph, const ir::Node& node, std::vector<ir::Node>& out) {
  const Tensor* input = node.inputs.size() > 1 && node.inputs[1] != ir::kNoValue
                            ? &*graph.value(node.inputs[1]).constant
                            : nullptr;
  UCUDNN_ASSIGN_OR_RETURN(const std::vector<float> scales, upsample_scales(node, input));
  LoweringBuilder build(graph, node, out, 13);
  ir::Attributes attrs;
  attrs.set("mode", node.attrs.get_string("mode"));
  attrs.set("coordinate_transformation_mode", std::string("asymmetric"));
  attrs.set("nearest_mode", std::string("floor"));
  const Shape y = graph.value(node.outputs[0]).shape;
  const ir::ValueId scales_value =
      build.constant("scales", Tensor::from_floats({static_cast<int64_t>(scales.size())}, scales));
  build.emit(OpKind::kResize, "", {node.inputs[0], ir::kNoValue, scales_value}, DType::kFloat32, y,
             node.outputs[0], std::move(attrs));
  return Status::ok();
}

}  // namespace

const OpDescriptor& describe_Upsample() {
  static const OpDescriptor d{.kind = OpKind::kUpsample,
                              .min_inputs = 1,
                              .max_inputs = 2,
                              .min_opset = 7,
                              .attrs = {attr_string("mode", "nearest"), attr_optional("scales", ir::AttrType::kFloats)},
                              .infer = upsample_infer};
  return d;
}

Status lower_upsamples(ir::Graph& graph) { return lower_each(graph, OpKind::kUpsample, lower_one, "Upsample"); }

}  // namespace ucudnn
