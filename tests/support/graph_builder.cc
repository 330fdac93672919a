// GraphBuilder (see graph_builder.h): values, nodes and their output shapes.
#include "tests/support/graph_builder.h"

#include <gtest/gtest.h>

#include <random>

#include "runtime/ir/fusion.h"
#include "runtime/ir/layout.h"

namespace ucudnn_test {

using ucudnn::DType;
using ucudnn::OpKind;
using ucudnn::Shape;
using ucudnn::Tensor;
using ucudnn::ir::Attributes;
using ucudnn::ir::ValueId;

namespace {

constexpr int kOpset = 13;

int64_t window_output(int64_t in, int64_t window, int64_t stride, int64_t pad) {
  return (in + 2 * pad - window) / stride + 1;
}

}  // namespace

Tensor random_tensor(const Shape& shape, uint32_t seed, float low, float high) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(low, high);
  std::vector<float> values(static_cast<size_t>(ucudnn::shape_numel(shape)));
  for (float& v : values) v = dist(rng);
  return Tensor::from_floats(shape, values);
}

GraphBuilder::GraphBuilder() {
  graph_.name = "test";
  graph_.opset = kOpset;
}

ValueId GraphBuilder::input(const std::string& name, const Shape& shape, DType dtype) {
  const ValueId id = graph_.add_value({name, dtype, shape, std::nullopt, -1});
  graph_.inputs.push_back(id);
  return id;
}

ValueId GraphBuilder::constant(const std::string& name, Tensor tensor) {
  const Shape shape = tensor.shape();
  const DType dtype = tensor.dtype();
  return graph_.add_value({name, dtype, shape, std::move(tensor), -1});
}

void GraphBuilder::output(ValueId id, const std::string& name) {
  if (!name.empty()) graph_.value(id).name = name;
  graph_.outputs.push_back(id);
}

std::vector<ValueId> GraphBuilder::node(OpKind op, std::vector<ValueId> inputs, const std::vector<Shape>& shapes,
                                        Attributes attrs, DType dtype) {
  const auto index = static_cast<ucudnn::ir::NodeId>(graph_.nodes.size());
  ucudnn::ir::Node node;
  node.name = std::string(ucudnn::op_name(op)).append("_").append(std::to_string(index));
  node.op = op;
  node.opset = kOpset;
  node.inputs = std::move(inputs);
  node.attrs = std::move(attrs);
  for (const Shape& shape : shapes) {
    const std::string name = std::string("v").append(std::to_string(graph_.values.size()));
    node.outputs.push_back(graph_.add_value({name, dtype, shape, std::nullopt, index}));
  }
  graph_.nodes.push_back(std::move(node));
  return graph_.nodes.back().outputs;
}

ValueId GraphBuilder::same_shape(OpKind op, std::vector<ValueId> inputs, Attributes attrs) {
  const ucudnn::ir::Value& first = graph_.value(inputs.at(0));
  const Shape shape = first.shape;
  const DType dtype = first.dtype;
  return node(op, std::move(inputs), {shape}, std::move(attrs), dtype)[0];
}

ValueId GraphBuilder::conv(ValueId x, ValueId weight, ValueId bias, const ConvOptions& options) {
  const Shape& in = shape(x);  // NCHW, or NHWC when channels_last
  const Shape& w = shape(weight);  // [K, C, R, S], or [K, R, S, C]
  const int64_t h = options.channels_last ? in[1] : in[2];
  const int64_t width = options.channels_last ? in[2] : in[3];
  const int64_t r = options.channels_last ? w[1] : w[2];
  const int64_t s = options.channels_last ? w[2] : w[3];
  const int64_t out_h = window_output(h, r, options.stride, options.pad);
  const int64_t out_w = window_output(width, s, options.stride, options.pad);
  const Shape out = options.channels_last ? Shape{in[0], out_h, out_w, w[0]} : Shape{in[0], w[0], out_h, out_w};
  Attributes attrs;
  attrs.set("group", int64_t{1});
  attrs.set("pads", std::vector<int64_t>{options.pad, options.pad, options.pad, options.pad});
  attrs.set("strides", std::vector<int64_t>{options.stride, options.stride});
  if (!options.activation.empty()) attrs.set(ucudnn::ir::kFusedActivationAttr, options.activation);
  if (options.channels_last) attrs.set(ucudnn::ir::kChannelsLastAttr, int64_t{1});
  std::vector<ValueId> inputs = {x, weight};
  if (bias != ucudnn::ir::kNoValue || options.residual != ucudnn::ir::kNoValue) inputs.push_back(bias);
  if (options.residual != ucudnn::ir::kNoValue) inputs.push_back(options.residual);
  return node(OpKind::kConv, std::move(inputs), {out}, std::move(attrs))[0];
}

ValueId GraphBuilder::batch_norm(ValueId x, ValueId scale, ValueId bias, ValueId mean, ValueId variance,
                                 float epsilon) {
  Attributes attrs;
  attrs.set("epsilon", epsilon);
  return same_shape(OpKind::kBatchNormalization, {x, scale, bias, mean, variance}, std::move(attrs));
}

ValueId GraphBuilder::relu(ValueId x) { return same_shape(OpKind::kRelu, {x}); }

ValueId GraphBuilder::add(ValueId a, ValueId b, const std::string& activation) {
  Attributes attrs;
  if (!activation.empty()) attrs.set(ucudnn::ir::kFusedActivationAttr, activation);
  return same_shape(OpKind::kAdd, {a, b}, std::move(attrs));
}

ValueId GraphBuilder::identity(ValueId x) { return same_shape(OpKind::kIdentity, {x}); }

std::vector<ValueId> GraphBuilder::dropout(ValueId x, bool mask) {
  std::vector<ValueId> outputs = {same_shape(OpKind::kDropout, {x})};
  if (mask) {
    const std::string name = std::string("v").append(std::to_string(graph_.values.size()));
    const auto producer = static_cast<ucudnn::ir::NodeId>(graph_.nodes.size() - 1);
    outputs.push_back(graph_.add_value({name, DType::kBool, shape(x), std::nullopt, producer}));
    graph_.nodes.back().outputs.push_back(outputs.back());
  }
  return outputs;
}

ValueId GraphBuilder::transpose(ValueId x, const std::vector<int64_t>& perm) {
  const Shape& in = shape(x);
  Shape out;
  for (int64_t axis : perm) out.push_back(in[static_cast<size_t>(axis)]);
  Attributes attrs;
  attrs.set("perm", perm);
  return node(OpKind::kTranspose, {x}, {out}, std::move(attrs))[0];
}

ValueId GraphBuilder::concat(std::vector<ValueId> inputs, int64_t axis) {
  Shape out = shape(inputs.at(0));
  out[static_cast<size_t>(axis)] = 0;
  for (ValueId id : inputs) out[static_cast<size_t>(axis)] += shape(id)[static_cast<size_t>(axis)];
  Attributes attrs;
  attrs.set("axis", axis);
  return node(OpKind::kConcat, std::move(inputs), {out}, std::move(attrs))[0];
}

ValueId GraphBuilder::max_pool(ValueId x, int64_t window, int64_t stride, bool channels_last) {
  const Shape& in = shape(x);
  const int64_t h_axis = channels_last ? 1 : 2;
  Shape out = in;
  out[h_axis] = window_output(in[h_axis], window, stride, 0);
  out[h_axis + 1] = window_output(in[h_axis + 1], window, stride, 0);
  Attributes attrs;
  attrs.set("kernel_shape", std::vector<int64_t>{window, window});
  attrs.set("strides", std::vector<int64_t>{stride, stride});
  if (channels_last) attrs.set(ucudnn::ir::kChannelsLastAttr, int64_t{1});
  return node(OpKind::kMaxPool, {x}, {out}, std::move(attrs))[0];
}

ValueId GraphBuilder::global_average_pool(ValueId x, bool channels_last) {
  const Shape& in = shape(x);
  const Shape out = channels_last ? Shape{in[0], 1, 1, in[3]} : Shape{in[0], in[1], 1, 1};
  Attributes attrs;
  if (channels_last) attrs.set(ucudnn::ir::kChannelsLastAttr, int64_t{1});
  return node(OpKind::kGlobalAveragePool, {x}, {out}, std::move(attrs))[0];
}

ValueId GraphBuilder::flatten(ValueId x) {
  const Shape& in = shape(x);
  int64_t inner = 1;
  for (size_t d = 1; d < in.size(); ++d) inner *= in[d];
  Attributes attrs;
  attrs.set("axis", int64_t{1});
  return node(OpKind::kFlatten, {x}, {{in[0], inner}}, std::move(attrs))[0];
}

ucudnn::ir::Graph GraphBuilder::finish() const {
  const ucudnn::Status status = graph_.validate();
  EXPECT_TRUE(status.is_ok()) << "a test graph is invalid: " << status.to_string();
  return graph_;
}

}  // namespace ucudnn_test
