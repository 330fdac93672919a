// Descriptor of Upsample (opsets 7 and 9): X → Y with dims floor(d · scale), scales from the `scales`
// attribute (opset 7) or a constant second input (opset 9). The importer lowers it into a Resize
// (onnx_import/lowering/upsample.h).
#include "runtime/ops/upsample.h"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {

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

}  // namespace

Expected<std::vector<float>> upsample_scales(const ir::Node& node, const Tensor* input) {
  if (node.opset < 9) {
    if (!node.attrs.has("scales")) return invalid_model("attribute 'scales' is missing");
    return node.attrs.get_floats("scales");
  }
  if (input == nullptr) return invalid_model("input 'scales' is missing");
  if (input->dtype() != DType::kFloat32) return invalid_model("input 'scales' must be float32");
  return std::vector<float>(input->data<float>(), input->data<float>() + input->numel());
}

const OpDescriptor& describe_Upsample() {
  static const OpDescriptor d{.kind = OpKind::kUpsample,
                              .min_inputs = 1,
                              .max_inputs = 2,
                              .min_opset = 7,
                              .attrs = {attr_string("mode", "nearest"), attr_optional("scales", ir::AttrType::kFloats)},
                              .infer = upsample_infer};
  return d;
}

}  // namespace ucudnn
