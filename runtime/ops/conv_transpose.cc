// Descriptor of ConvTranspose: X [N, C, spatial...], W [C, M/group, kernel...], optional B [M]
// → Y [N, M, out...] (the geometry in conv_transpose.h). 1-D to 3-D, as Conv (a 3-D one is first rewritten
// into 2-D ones: Note [3-D ConvTranspose as 2-D ones], volumetric.h). It never reaches a
// backend: the importer rewrites it into ConvGradData (+ the bias), the data gradient of the Conv
// from Y's shape to X's with the same weights (lower_conv_transposes below; Note [ConvTranspose as
// ConvGradData], conv_transpose.h), which the optimizer plans and divides like any convolution.
// FLOPs: 2 · numel(X) · (M/group) · prod(kernel), the transposed Conv's.
#include "runtime/ops/conv_transpose.h"

#include <algorithm>
#include <string>

#include "runtime/core/bytes.h"
#include "runtime/ops/lowering.h"
#include "runtime/ops/op_descriptor.h"
#include "runtime/ops/window_geometry.h"

namespace ucudnn {

namespace {

std::string ints_to_string(const std::vector<int64_t>& v) { return shape_to_string(v); }

}  // namespace

Expected<ConvTransposeGeometry> conv_transpose_geometry(const ir::Attributes& attrs, const Shape& input_spatial,
                                                        const std::vector<int64_t>& kernel) {
  const size_t rank = input_spatial.size();
  if (kernel.size() != rank)
    return invalid_model("kernel_shape " + ints_to_string(kernel) + " has " + std::to_string(kernel.size()) +
                         " dims but the input has " + std::to_string(rank) + " spatial dims");
  ConvTransposeGeometry g;
  std::vector<int64_t> pads, output_padding, output_shape;
  UCUDNN_RETURN_IF_ERROR(read_axis_ints(attrs, "strides", rank, 1, &g.stride));
  UCUDNN_RETURN_IF_ERROR(read_axis_ints(attrs, "dilations", rank, 1, &g.dilation));
  UCUDNN_RETURN_IF_ERROR(read_axis_ints(attrs, "pads", 2 * rank, 0, &pads));
  UCUDNN_RETURN_IF_ERROR(read_axis_ints(attrs, "output_padding", rank, 0, &output_padding));
  if (attrs.has("output_shape")) {
    output_shape = attrs.get_ints("output_shape");
    if (output_shape.size() == rank + 2) output_shape.erase(output_shape.begin(), output_shape.begin() + 2);
    if (output_shape.size() != rank)
      return invalid_model("output_shape " + ints_to_string(attrs.get_ints("output_shape")) + " has " +
                           std::to_string(attrs.get_ints("output_shape").size()) + " values; expected " +
                           std::to_string(rank) + " (the spatial dims) or " + std::to_string(rank + 2));
  }
  const std::string auto_pad = attrs.has("auto_pad") ? attrs.get_string("auto_pad") : "NOTSET";
  if (auto_pad != "NOTSET" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER" && auto_pad != "VALID")
    return invalid_model("auto_pad '" + auto_pad + "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID");

  g.pad_begin.resize(rank);
  g.pad_end.resize(rank);
  g.output.resize(rank);
  for (size_t i = 0; i < rank; ++i) {
    const std::string axis = " along spatial axis " + std::to_string(i);
    const int64_t in = input_spatial[i], s = g.stride[i], d = g.dilation[i], op = output_padding[i];
    if (kernel[i] < 1) return invalid_model("kernel size " + std::to_string(kernel[i]) + axis + " must be >= 1");
    if (s < 1) return invalid_model("stride " + std::to_string(s) + axis + " must be >= 1");
    if (d < 1) return invalid_model("dilation " + std::to_string(d) + axis + " must be >= 1");
    if (pads[i] < 0 || pads[i + rank] < 0) return invalid_model("pads " + ints_to_string(pads) + " must be >= 0");
    if (op < 0 || (op >= s && op >= d))
      return invalid_model("output_padding " + std::to_string(op) + axis + " must be >= 0 and below the stride " +
                           std::to_string(s) + " or the dilation " + std::to_string(d));
    if (op >= s)
      return unsupported("output_padding " + std::to_string(op) + axis + " is not below the stride " +
                         std::to_string(s) + "; ucudnn runs ConvTranspose as a Conv's gradient, which needs it so");
    // n = s * (in - 1) + op + (k - 1) * d + 1, each step checked.
    int64_t n = 0, span = 0;
    if (in < 1 || !checked_mul(s, in - 1, &n) || !checked_mul(kernel[i] - 1, d, &span) || !checked_add(n, span, &n) ||
        !checked_add(n, op + 1, &n))
      return invalid_model("the output size" + axis + " of input size " + std::to_string(in) + ", stride " +
                           std::to_string(s) + " and kernel " + std::to_string(kernel[i]) +
                           (in < 1 ? " is empty" : " overflows"));
    int64_t total = 0;
    if (!output_shape.empty() || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      int64_t out = 0;
      if (!output_shape.empty()) out = output_shape[i];
      else if (!checked_mul(in, s, &out))
        return invalid_model("the output size" + axis + " (input size " + std::to_string(in) + " x stride " +
                             std::to_string(s) + ") overflows");
      if (out < 1) return invalid_model("output size " + std::to_string(out) + axis + " must be >= 1");
      total = n - out;  // no overflow: both are in [1, 2^63)
      // Halves rounded down, as ONNX's reference computes them (see conv_transpose.h for what a
      // negative total becomes).
      const int64_t half = total >= 0 ? total / 2 : -((1 - total) / 2);
      g.pad_begin[i] = auto_pad == "SAME_UPPER" ? half : total - half;
      g.pad_end[i] = total - g.pad_begin[i];
      if (g.pad_begin[i] < 0 || op - std::min<int64_t>(g.pad_end[i], 0) >= s)
        return unsupported("output size " + std::to_string(out) + axis + " extends " +
                           (g.pad_begin[i] < 0 ? "before" : "past") + " the " + std::to_string(n) +
                           " the kernel covers by more than a Conv's gradient can (it may add fewer rows than the "
                           "stride " + std::to_string(s) + ", at the end)");
    } else if (auto_pad == "NOTSET") {
      g.pad_begin[i] = pads[i];
      g.pad_end[i] = pads[i + rank];
    }
    if (!checked_sub(n, g.pad_begin[i], &g.output[i]) || !checked_sub(g.output[i], g.pad_end[i], &g.output[i]) ||
        g.output[i] < 1)
      return invalid_model("pads " + ints_to_string(pads) + " leave an empty output" + axis + " (natural size " +
                           std::to_string(n) + ")");
  }
  return g;
}

namespace {

Status infer_conv_transpose(InferContext& ctx) {
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(0, {DType::kFloat32}));
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(1, {DType::kFloat32}));
  if (ctx.has_input(2)) UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(2, {DType::kFloat32}));
  const Shape& x = ctx.input(0).shape;
  const Shape& w = ctx.input(1).shape;
  if (x.size() < 3) return ctx.error("X must have rank >= 3 ([N, C, spatial...]), got rank " + std::to_string(x.size()));
  if (w.size() != x.size())
    return ctx.error("W has rank " + std::to_string(w.size()) + " but X has rank " + std::to_string(x.size()));
  if (x.size() > 5)
    return ctx.unsupported_error(std::to_string(x.size() - 2) + "-D ConvTranspose; ucudnn supports 1-D to 3-D");
  const int64_t group = ctx.attrs().get_int("group");
  if (group < 1) return ctx.error("group " + std::to_string(group) + " must be >= 1");
  if (x[1] % group != 0)
    return ctx.error("group " + std::to_string(group) + " does not divide the input channels " + std::to_string(x[1]));
  if (w[0] != x[1])
    return ctx.error("channel mismatch: X has " + std::to_string(x[1]) + " channels but W " + shape_to_string(w) +
                     " has " + std::to_string(w[0]) + " (ConvTranspose's W is [C, M/group, kernel...])");
  const int64_t filters = w[1] * group;
  const std::vector<int64_t> kernel(w.begin() + 2, w.end());
  if (ctx.attrs().has("kernel_shape") && ctx.attrs().get_ints("kernel_shape") != kernel)
    return ctx.error("kernel_shape " + shape_to_string(ctx.attrs().get_ints("kernel_shape")) +
                     " does not match W's spatial dims " + shape_to_string(kernel));
  if (ctx.has_input(2) && ctx.input(2).shape != Shape{filters})
    return ctx.error("B must have shape [" + std::to_string(filters) + "], got " + shape_to_string(ctx.input(2).shape));
  auto geometry = conv_transpose_geometry(ctx.attrs(), Shape(x.begin() + 2, x.end()), kernel);
  if (!geometry) {
    if (geometry.status().code() == StatusCode::kUnsupported) return ctx.unsupported_error(geometry.status().message());
    return ctx.error(geometry.status().message());
  }
  Shape y = {x[0], filters};
  y.insert(y.end(), geometry->output.begin(), geometry->output.end());
  ctx.set_output(0, DType::kFloat32, std::move(y));
  return Status::ok();
}

int64_t conv_transpose_flops(const InferContext& ctx) {
  const Shape& w = ctx.input(1).shape;
  return saturating_mul(saturating_mul(int64_t{2}, shape_numel(ctx.input(0).shape)),
                        shape_numel(Shape(w.begin() + 1, w.end())));
}

}  // namespace

const OpDescriptor& describe_ConvTranspose() {
  static const OpDescriptor d{
      .kind = OpKind::kConvTranspose,
      .min_inputs = 2,
      .max_inputs = 3,
      .min_opset = 1,
      .attrs = {attr_string("auto_pad", "NOTSET"), attr_optional("dilations", ir::AttrType::kInts),
                attr_int("group", 1), attr_optional("kernel_shape", ir::AttrType::kInts),
                attr_optional("output_padding", ir::AttrType::kInts),
                attr_optional("output_shape", ir::AttrType::kInts), attr_optional("pads", ir::AttrType::kInts),
                attr_optional("strides", ir::AttrType::kInts)},
      .infer = infer_conv_transpose,
      .flops = conv_transpose_flops};
  return d;
}

namespace {

// The ConvGradData (and bias) nodes computing ConvTranspose `node`, appended to `out`.
Status lower_one(ir::Graph& graph, const ir::Node& node, std::vector<ir::Node>& out) {
  const Shape x = graph.value(node.inputs[0]).shape;
  const Shape w = graph.value(node.inputs[1]).shape;
  const ir::ValueId y = node.outputs[0];
  const Shape y_shape = graph.value(y).shape;
  const std::vector<int64_t> kernel(w.begin() + 2, w.end());
  auto geometry = conv_transpose_geometry(node.attrs, Shape(x.begin() + 2, x.end()), kernel);
  if (!geometry) return Status(geometry.status().code(), node.describe() + ": " + geometry.status().message());
  // A negative pad_end is rows past the kernel's reach: the gradient's input_shape holds them, pads 0.
  std::vector<int64_t> pads = geometry->pad_begin;
  for (int64_t end : geometry->pad_end) pads.push_back(std::max<int64_t>(end, 0));

  ir::Node data;
  data.name = node.name;
  data.op = OpKind::kConvGradData;
  data.opset = node.opset;
  data.inputs = {node.inputs[0], node.inputs[1]};
  data.attrs.set("kernel_shape", kernel);
  data.attrs.set("pads", std::move(pads));
  data.attrs.set("strides", geometry->stride);
  data.attrs.set("dilations", geometry->dilation);
  data.attrs.set("group", node.attrs.get_int("group"));
  data.attrs.set("input_shape", std::vector<int64_t>(y_shape.begin(), y_shape.end()));
  fill_default_attributes(data);
  const bool has_bias = node.inputs.size() > 2 && node.inputs[2] != ir::kNoValue;
  if (!has_bias) {
    data.outputs = {y};
    out.push_back(std::move(data));
    return Status::ok();
  }
  const std::string y_name = graph.value(y).name;  // a copy: add_value moves the values
  const ir::ValueId unbiased = graph.add_value(
      {graph.unused_value_name(y_name + "/without_bias"), DType::kFloat32, y_shape, std::nullopt, -1});
  data.outputs = {unbiased};
  out.push_back(std::move(data));

  // B [M] → [M, 1, ...] so that it broadcasts over Y [N, M, spatial...].
  std::vector<int64_t> bias_dims(y_shape.size() - 1, 1);
  bias_dims[0] = y_shape[1];
  const ir::ValueId dims = graph.add_value({graph.unused_value_name(node.name + "/bias_shape"), DType::kInt64,
                                            Shape{static_cast<int64_t>(bias_dims.size())},
                                            Tensor::from_int64s({static_cast<int64_t>(bias_dims.size())}, bias_dims),
                                            -1});
  const ir::ValueId bias = graph.add_value({graph.unused_value_name(node.name + "/bias"), DType::kFloat32,
                                            Shape(bias_dims.begin(), bias_dims.end()), std::nullopt, -1});
  ir::Node reshape;
  reshape.name = node.name + "/bias_reshape";
  reshape.op = OpKind::kReshape;
  reshape.opset = node.opset;
  reshape.inputs = {node.inputs[2], dims};
  reshape.outputs = {bias};
  fill_default_attributes(reshape);
  out.push_back(std::move(reshape));

  ir::Node add;
  add.name = node.name + "/add_bias";
  add.op = OpKind::kAdd;
  add.opset = node.opset;
  add.inputs = {unbiased, bias};
  add.outputs = {y};
  fill_default_attributes(add);
  out.push_back(std::move(add));
  return Status::ok();
}

}  // namespace

Status lower_conv_transposes(ir::Graph& graph) {
  return lower_each(graph, OpKind::kConvTranspose, lower_one, "ConvTranspose");
}

}  // namespace ucudnn
