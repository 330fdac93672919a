// kernel_request (see backend.h).
#include "runtime/backend/backend.h"

#include "runtime/ir/fusion.h"

namespace ucudnn::runtime {

namespace {

Shape value_shape(const ir::Graph& graph, ir::ValueId id, int64_t micro_batch) {
  Shape shape = id == ir::kNoValue ? Shape{} : graph.value(id).shape;
  if (micro_batch > 0 && !shape.empty()) shape[0] = micro_batch;
  return shape;
}

}  // namespace

KernelRequest kernel_request(const ir::Graph& graph, const ir::Node& node, int64_t micro_batch, int algorithm,
                             bool accumulate) {
  KernelRequest request{graph, node, {}, {}, algorithm, accumulate};
  for (size_t i = 0; i < node.inputs.size(); ++i)
    request.src_shapes.push_back(
        value_shape(graph, node.inputs[i], ir::is_batch_divided_input(node, i) ? micro_batch : 0));
  for (size_t i = 0; i < node.outputs.size(); ++i)
    request.dst_shapes.push_back(value_shape(graph, node.outputs[i], ir::is_batch_divided_output(node, i) ? micro_batch : 0));
  return request;
}

}  // namespace ucudnn::runtime
