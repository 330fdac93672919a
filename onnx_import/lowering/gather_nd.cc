// The lowering of GatherND into Gathers (gather_nd.h).
#include "onnx_import/lowering/gather_nd.h"

#include <algorithm>
#include <string>
#include <vector>

#include "onnx_import/lowering/lowering_builder.h"
#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {

Status lower_one(ir::Graph& graph, const ir::Node& node, std::vector<ir::Node>& out) {
  const ir::Value data = graph.value(node.inputs[0]);  // copies: adding values moves them
  const ir::Value indices = graph.value(node.inputs[1]);
  const Shape y = graph.value(node.outputs[0]).shape;
  const auto b = static_cast<size_t>(node.attrs.get_int("batch_dims"));
  const auto k = static_cast<size_t>(indices.shape.back());
  const Shape tuple_shape(indices.shape.begin(), indices.shape.end() - 1);  // [B..., I...]
  const int64_t batches = shape_numel(Shape(data.shape.begin(), data.shape.begin() + b));
  const int64_t rows_per_batch = shape_numel(Shape(data.shape.begin() + b, data.shape.begin() + b + k));
  Shape rows_shape{batches * rows_per_batch};
  rows_shape.insert(rows_shape.end(), data.shape.begin() + b + k, data.shape.end());

  LoweringBuilder build(graph, node, out, std::max(node.opset, 13));
  const ir::ValueId rows = build.emit(OpKind::kReshape, "rows",
                                      {node.inputs[0], build.int64s("rows_shape", rows_shape)}, data.dtype, rows_shape);
  ir::Attributes last_axis;
  last_axis.set("axis", int64_t{-1});
  std::vector<ir::ValueId> terms;
  int64_t stride = rows_per_batch;
  for (size_t j = 0; j < k; ++j) {
    const int64_t dim = data.shape[b + j];
    stride /= dim == 0 ? 1 : dim;
    const std::string tag = std::to_string(j);
    const ir::ValueId component =
        build.emit(OpKind::kGather, "component" + tag,
                   {node.inputs[1], build.int64_scalar("component" + tag + "_at", static_cast<int64_t>(j))},
                   indices.dtype, tuple_shape, ir::kNoValue, last_axis);
    const ir::ValueId table = build.emit(
        OpKind::kMul, "strides" + tag, {build.iota("positions" + tag, dim), build.int64_scalar("stride" + tag, stride)},
        DType::kInt64, {dim});
    terms.push_back(build.emit(OpKind::kGather, "offset" + tag, {table, component}, DType::kInt64, tuple_shape));
  }
  if (b > 0) {  // the first row of each batch, broadcast over I
    Shape first_shape(data.shape.begin(), data.shape.begin() + b);
    first_shape.resize(tuple_shape.size(), 1);
    std::vector<int64_t> first(static_cast<size_t>(batches));
    for (int64_t i = 0; i < batches; ++i) first[static_cast<size_t>(i)] = i * rows_per_batch;
    terms.push_back(build.constant("batch_first_row", Tensor::from_int64s(first_shape, first)));
  }
  const ir::ValueId row = terms.size() == 1 ? terms[0] : build.chain(OpKind::kAdd, "row", terms, DType::kInt64);
  build.emit(OpKind::kGather, "gather", {rows, row}, data.dtype, y, node.outputs[0]);
  return Status::ok();
}

}  // namespace

Status lower_gather_nds(ir::Graph& graph) { return lower_each(graph, OpKind::kGatherND, lower_one, "GatherND"); }

}  // namespace ucudnn
