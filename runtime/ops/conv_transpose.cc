// Descriptor of ConvTranspose: X [N, C, spatial...], W [C, M/group, kernel...], optional B [M]
// → Y [N, M, out...] (the geometry in conv_transpose.h). 1-D to 3-D, as Conv (a 3-D one is first rewritten
// into 2-D ones: Note [3-D ConvTranspose as 2-D ones], onnx_import/lowering/volumetric.h). It never reaches a
// backend: the importer rewrites it into ConvGradData (+ the bias), the data gradient of the Conv
// from Y's shape to X's with the same weights (Note [ConvTranspose as ConvGradData],
// onnx_import/lowering/conv_transpose.h), which the optimizer plans and divides like any convolution.
// FLOPs: 2 · numel(X) · (M/group) · prod(kernel), the transposed Conv's.
#include "runtime/ops/conv_transpose.h"

#include <algorithm>
#include <string>

#include "runtime/core/bytes.h"
#include "runtime/ops/conv_checks.h"
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
  UCUDNN_ASSIGN_OR_RETURN(const int64_t group, checked_conv_group(ctx, "ConvTranspose"));
  const Shape& x = ctx.input(0).shape;
  const Shape& w = ctx.input(1).shape;
  if (w[0] != x[1])
    return ctx.error("channel mismatch: X has " + std::to_string(x[1]) + " channels but W " + shape_to_string(w) +
                     " has " + std::to_string(w[0]) + " (ConvTranspose's W is [C, M/group, kernel...])");
  const int64_t filters = w[1] * group;
  UCUDNN_ASSIGN_OR_RETURN(const std::vector<int64_t> kernel, checked_conv_kernel(ctx, filters));
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

}  // namespace ucudnn
