// One-node graphs in the channels-last layout (see channels_last_graph.h).
#include "tests/support/channels_last_graph.h"

#include <utility>

#include "optimizer/passes/passes.h"
#include "runtime/ir/fusion.h"
#include "runtime/ir/layout.h"

namespace ucudnn_test {

namespace {

using ucudnn::DType;
using ucudnn::Shape;
using ucudnn::Tensor;
namespace ir = ucudnn::ir;

// `t` ([A, B, C, D] float32) with output dim d = input dim perm[d].
Tensor permute4(const Tensor& t, const std::vector<int64_t>& perm) {
  const Shape& in = t.shape();
  const Shape out = {in[perm[0]], in[perm[1]], in[perm[2]], in[perm[3]]};
  Tensor result = std::move(Tensor::allocate(DType::kFloat32, out)).value();
  const int64_t strides[4] = {in[1] * in[2] * in[3], in[2] * in[3], in[3], 1};
  const float* src = t.data<float>();
  float* dst = result.data<float>();
  int64_t i = 0;
  for (int64_t a = 0; a < out[0]; ++a)
    for (int64_t b = 0; b < out[1]; ++b)
      for (int64_t c = 0; c < out[2]; ++c)
        for (int64_t d = 0; d < out[3]; ++d, ++i)
          dst[i] = src[a * strides[perm[0]] + b * strides[perm[1]] + c * strides[perm[2]] + d * strides[perm[3]]];
  return result;
}

}  // namespace

Tensor to_nhwc(const Tensor& t) { return permute4(t, ir::kNchwToNhwcPerm); }
Tensor to_nchw(const Tensor& t) { return permute4(t, ir::kNhwcToNchwPerm); }

OneNodeGraph to_channels_last(const OneNodeGraph& built) {
  OneNodeGraph nhwc = built;
  ir::Node& node = nhwc.graph.nodes.front();
  node.attrs.set(ir::kChannelsLastAttr, int64_t{1});
  std::vector<ir::ValueId> values = {node.inputs[0], node.outputs[0]};
  if (node.op == ucudnn::OpKind::kConv) {
    values.push_back(node.inputs[1]);
    if (node.inputs.size() > ir::kConvResidualInput) values.push_back(node.inputs[ir::kConvResidualInput]);
  }
  if (ucudnn::optimizer::is_training_layout_op(node.op)) {  // every 4-D input and output
    values.clear();
    for (const std::vector<ir::ValueId>* list : {&node.inputs, &node.outputs})
      for (ir::ValueId id : *list)
        if (id != ir::kNoValue && nhwc.graph.value(id).shape.size() == 4) values.push_back(id);
  }
  for (ir::ValueId id : values) {
    if (id == ir::kNoValue) continue;
    ir::Value& v = nhwc.graph.value(id);
    v.shape = ir::nchw_to_nhwc(v.shape);
    if (v.constant) v.constant = to_nhwc(*v.constant);
    for (size_t i = 0; i < nhwc.graph.inputs.size(); ++i)
      if (nhwc.graph.inputs[i] == id) nhwc.feeds[i] = to_nhwc(nhwc.feeds[i]);
  }
  return nhwc;
}

}  // namespace ucudnn_test
