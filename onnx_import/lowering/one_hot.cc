// The lowering of OneHot into Equal, Or and Where (one_hot.h).
#include "onnx_import/lowering/one_hot.h"

#include <algorithm>
#include <vector>

#include "onnx_import/lowering/lowering_builder.h"
#include "runtime/core/dtype.h"
#include "runtime/ops/one_hot.h"
#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {

Status lower_one(ir::Graph& graph, const ir::Node& node, std::vector<ir::Node>& out) {
  const ir::Value indices = graph.value(node.inputs[0]);  // copies: adding values moves them
  const ir::Value values = graph.value(node.inputs[2]);
  const Shape y = graph.value(node.outputs[0]).shape;
  const int64_t depth = one_hot_depth(*graph.value(node.inputs[1]).constant).value();
  const int64_t axis = normalize_axis(node.attrs.get_int("axis"), static_cast<int64_t>(y.size()));
  LoweringBuilder build(graph, node, out, std::max(node.opset, 13));

  ir::ValueId index = node.inputs[0];
  if (indices.dtype != DType::kInt64) {
    ir::Attributes to;
    to.set("to", static_cast<int64_t>(dtype_to_onnx(DType::kInt64)));
    index = build.emit(OpKind::kCast, "index", {index}, DType::kInt64, indices.shape, ir::kNoValue, to);
  }
  Shape spread = indices.shape;
  spread.insert(spread.begin() + axis, 1);
  index = build.emit(OpKind::kUnsqueeze, "spread", {index, build.int64s("axis", {axis})}, DType::kInt64, spread);

  Shape positions_shape(y.size(), 1);  // depth along the new axis
  positions_shape[static_cast<size_t>(axis)] = depth;
  const ir::ValueId from_start = build.emit(
      OpKind::kReshape, "positions", {build.iota("iota", depth), build.int64s("positions_shape", positions_shape)},
      DType::kInt64, positions_shape);
  const ir::ValueId from_end =
      build.emit(OpKind::kSub, "negative_positions", {from_start, build.int64_scalar("depth", depth)}, DType::kInt64,
                 positions_shape);
  const ir::ValueId hit_start = build.emit(OpKind::kEqual, "hit_from_start", {index, from_start}, DType::kBool, y);
  const ir::ValueId hit_end = build.emit(OpKind::kEqual, "hit_from_end", {index, from_end}, DType::kBool, y);
  const ir::ValueId hit = build.emit(OpKind::kOr, "hit", {hit_start, hit_end}, DType::kBool, y);

  // values[0] and values[1] as scalars: constants when values is one, else Gathers.
  ir::ValueId off, on;
  if (values.constant.has_value()) {
    const Tensor& v = *values.constant;
    const size_t element = dtype_size(v.dtype());
    UCUDNN_ASSIGN_OR_RETURN(Tensor off_value, Tensor::allocate(v.dtype(), {}));
    UCUDNN_ASSIGN_OR_RETURN(Tensor on_value, Tensor::allocate(v.dtype(), {}));
    std::copy_n(static_cast<const char*>(v.raw()), element, static_cast<char*>(off_value.raw()));
    std::copy_n(static_cast<const char*>(v.raw()) + element, element, static_cast<char*>(on_value.raw()));
    off = build.constant("off", std::move(off_value));
    on = build.constant("on", std::move(on_value));
  } else {
    const ir::ValueId flat =
        build.emit(OpKind::kReshape, "values", {node.inputs[2], build.int64s("values_shape", {2})}, values.dtype, {2});
    off = build.emit(OpKind::kGather, "off", {flat, build.int64_scalar("off_at", 0)}, values.dtype, {});
    on = build.emit(OpKind::kGather, "on", {flat, build.int64_scalar("on_at", 1)}, values.dtype, {});
  }
  build.emit(OpKind::kWhere, "select", {hit, on, off}, values.dtype, y, node.outputs[0]);
  return Status::ok();
}

}  // namespace

Status lower_one_hots(ir::Graph& graph) { return lower_each(graph, OpKind::kOneHot, lower_one, "OneHot"); }

}  // namespace ucudnn
