// The lowering of Sum and Mean (sum_mean.h): S = ((X0 + X1) + X2) + ..., Mean = S · (1/n); one input is an
// Identity.
#include "onnx_import/lowering/sum_mean.h"

#include <algorithm>
#include <string>
#include <vector>

#include "onnx_import/lowering/lowering_builder.h"
#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {

Status lower_one(ir::Graph& graph, const ir::Node& node, std::vector<ir::Node>& out) {
  LoweringBuilder build(graph, node, out, std::max(node.opset, 13));
  const ir::ValueId y = node.outputs[0];
  const size_t n = node.inputs.size();
  const bool mean = node.op == OpKind::kMean && n > 1;
  if (n == 1) {
    build.emit(OpKind::kIdentity, "copy", {node.inputs[0]}, DType::kFloat32, graph.value(y).shape, y);
    return Status::ok();
  }
  const ir::ValueId sum = build.chain(OpKind::kAdd, "sum", node.inputs, DType::kFloat32, mean ? ir::kNoValue : y);
  if (mean) {
    const Shape shape = graph.value(sum).shape;
    const float scale = 1.0f / static_cast<float>(n);
    build.emit(OpKind::kMul, "mean", {sum, build.constant("scale", Tensor::from_floats(Shape{}, {&scale, 1}))},
               DType::kFloat32, shape, y);
  }
  return Status::ok();
}

}  // namespace

Status lower_sums_and_means(ir::Graph& graph) {
  UCUDNN_RETURN_IF_ERROR(lower_each(graph, OpKind::kSum, lower_one, "Sum"));
  return lower_each(graph, OpKind::kMean, lower_one, "Mean");
}

}  // namespace ucudnn
