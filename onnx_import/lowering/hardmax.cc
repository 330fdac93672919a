// The lowering of Hardmax (hardmax.h).
#include "onnx_import/lowering/hardmax.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "onnx_import/lowering/lowering_builder.h"
#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {

Status lower_one(ir::Graph& graph, const ir::Node& node, std::vector<ir::Node>& out) {
  const Shape x = graph.value(node.inputs[0]).shape;
  const bool rows = node.opset < 13;  // groups of every dim from the axis on
  const int64_t axis = normalize_axis(node.attrs.has("axis") ? node.attrs.get_int("axis") : (rows ? 1 : -1),
                                      static_cast<int64_t>(x.size()));
  const DType f32 = DType::kFloat32;
  LoweringBuilder build(graph, node, out, std::max(node.opset, 13));
  ir::ValueId v = node.inputs[0];
  Shape shape = x;
  int64_t a = axis;
  if (rows) {
    shape = {shape_numel(Shape(x.begin(), x.begin() + axis)), shape_numel(Shape(x.begin() + axis, x.end()))};
    a = 1;
    v = build.emit(OpKind::kReshape, "rows", {v, build.int64s("rows_shape", shape)}, f32, shape);
  }
  ir::Attributes arg;
  arg.set("axis", a);
  arg.set("keepdims", int64_t{1});
  Shape kept = shape;
  kept[static_cast<size_t>(a)] = 1;
  const ir::ValueId first_max = build.emit(OpKind::kArgMax, "first_max", {v}, DType::kInt64, kept, ir::kNoValue, arg);
  Shape positions_shape(shape.size(), 1);
  positions_shape[static_cast<size_t>(a)] = shape[static_cast<size_t>(a)];
  std::vector<int64_t> positions(static_cast<size_t>(shape[static_cast<size_t>(a)]));
  std::iota(positions.begin(), positions.end(), int64_t{0});
  const ir::ValueId position = build.constant("positions", Tensor::from_int64s(positions_shape, positions));
  const ir::ValueId hit = build.emit(OpKind::kEqual, "is_first_max", {first_max, position}, DType::kBool, shape);
  ir::Attributes to;
  to.set("to", int64_t{1});  // TensorProto FLOAT
  const ir::ValueId ones =
      build.emit(OpKind::kCast, "ones", {hit}, f32, shape, rows ? ir::kNoValue : node.outputs[0], to);
  if (rows) build.emit(OpKind::kReshape, "back", {ones, build.int64s("back_shape", x)}, f32, x, node.outputs[0]);
  return Status::ok();
}

}  // namespace

Status lower_hardmaxes(ir::Graph& graph) { return lower_each(graph, OpKind::kHardmax, lower_one, "Hardmax"); }

}  // namespace ucudnn
