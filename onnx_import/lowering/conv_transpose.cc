// The lowering of ConvTranspose into ConvGradData and its bias (conv_transpose.h).
#include "onnx_import/lowering/conv_transpose.h"

#include <algorithm>
#include <string>
#include <vector>

#include "onnx_import/lowering/lowering_builder.h"
#include "runtime/ops/conv_transpose.h"
#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

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
