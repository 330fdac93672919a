// The lowering of Max and Min of other than two operands (max_min.h).
#include "onnx_import/lowering/max_min.h"

#include <algorithm>
#include <vector>

#include "onnx_import/lowering/lowering_builder.h"
#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {

Status lower_one(ir::Graph& graph, const ir::Node& node, std::vector<ir::Node>& out) {
  const size_t n = node.inputs.size();
  if (n == 2) {  // what the kernels run
    out.push_back(node);
    return Status::ok();
  }
  LoweringBuilder build(graph, node, out, std::max(node.opset, 13));
  const ir::ValueId y = node.outputs[0];
  const DType dtype = graph.value(y).dtype;
  if (n == 1) {
    build.emit(OpKind::kIdentity, "copy", {node.inputs[0]}, dtype, graph.value(y).shape, y);
    return Status::ok();
  }
  build.chain(node.op, "pair", node.inputs, dtype, y);
  return Status::ok();
}

}  // namespace

Status lower_maxes_and_mins(ir::Graph& graph) {
  UCUDNN_RETURN_IF_ERROR(lower_each(graph, OpKind::kMax, lower_one, "Max"));
  return lower_each(graph, OpKind::kMin, lower_one, "Min");
}

}  // namespace ucudnn
