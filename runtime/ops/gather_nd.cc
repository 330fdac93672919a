// Descriptor and lowering of GatherND (gather_nd.h).
#include "runtime/ops/gather_nd.h"

#include <algorithm>
#include <string>
#include <vector>

#include "runtime/ops/indexing.h"
#include "runtime/ops/lowering.h"
#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {

// Data's and indices' dims checked against batch_dims and the index tuple's length k; the output shape.
Status gather_nd_infer(InferContext& ctx) {
  if (!ctx.has_input(0)) return ctx.error("input 0 is required");
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(1, {DType::kInt64, DType::kInt32}));
  const Shape& data = ctx.input(0).shape;
  const Shape& indices = ctx.input(1).shape;
  const int64_t b = ctx.attrs().get_int("batch_dims");
  const auto r = static_cast<int64_t>(data.size()), q = static_cast<int64_t>(indices.size());
  if (b < 0 || b >= std::min(r, q))
    return ctx.error("batch_dims " + std::to_string(b) + " must be below the ranks of data and indices");
  for (int64_t d = 0; d < b; ++d)
    if (indices[d] != data[d])
      return ctx.error("indices' batch dim " + std::to_string(d) + " is " + std::to_string(indices[d]) + ", data's " +
                       std::to_string(data[d]));
  const int64_t k = indices.back();
  if (k < 1 || k > r - b)
    return ctx.error("indices' last dim " + std::to_string(k) + " (the index tuple's length) must lie in 1.." +
                     std::to_string(r - b));
  if (ctx.input(1).constant != nullptr) {
    UCUDNN_ASSIGN_OR_RETURN(const std::vector<int64_t> values, ctx.input(1).constant->to_int64_vector());
    const Status s = check_indices(values, std::vector<int64_t>(data.begin() + b, data.begin() + b + k), "indices");
    if (!s.is_ok()) return ctx.error(s.message());
  }
  Shape out(indices.begin(), indices.end() - 1);
  out.insert(out.end(), data.begin() + b + k, data.end());
  ctx.set_output(0, ctx.input(0).dtype, std::move(out));
  return Status::ok();
}

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

const OpDescriptor& describe_GatherND() {
  static const OpDescriptor d{.kind = OpKind::kGatherND,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .min_opset = 11,
                              .attrs = {attr_int("batch_dims", 0)},
                              .infer = gather_nd_infer};
  return d;
}

Status lower_gather_nds(ir::Graph& graph) { return lower_each(graph, OpKind::kGatherND, lower_one, "GatherND"); }

}  // namespace ucudnn
