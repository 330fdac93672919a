// Descriptor of LayerNormalization: X [d0, ..., dr-1], Scale and optional B broadcasting to X's
// normalized shape [d_axis, ..., dr-1] → Y like X, optional Mean and InvStdDev [d0, ..., d_axis-1, 1, ..., 1];
// attributes axis (-1), epsilon (1e-5), stash_type (1: float32; others Unsupported). It never reaches a
// backend: lower_layer_norms rewrites it (Note [lowered ops], lowering.h), so the pointwise part fuses
// and training differentiates the pieces.
#include "runtime/ops/layer_norm.h"

#include <string>
#include <utility>
#include <vector>

#include "runtime/core/bytes.h"
#include "runtime/ops/lowering.h"
#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {

// X's axis attribute as a dim index; -1 when out of range.
int64_t normalized_axis(const ir::Attributes& attrs, size_t rank) {
  int64_t axis = attrs.get_int("axis");
  if (axis < 0) axis += static_cast<int64_t>(rank);
  return axis >= 0 && axis < static_cast<int64_t>(rank) ? axis : -1;
}

// X's shape with the normalized dims made 1 (Mean's and InvStdDev's shape).
Shape statistics_shape(const Shape& x, int64_t axis) {
  Shape s = x;
  for (size_t d = static_cast<size_t>(axis); d < s.size(); ++d) s[d] = 1;
  return s;
}

Status infer_layer_norm(InferContext& ctx) {
  for (size_t i = 0; i < ctx.num_inputs(); ++i)
    if (ctx.has_input(i)) UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(i, {DType::kFloat32}));
  if (ctx.attrs().get_int("stash_type") != 1)
    return ctx.unsupported_error("stash_type " + std::to_string(ctx.attrs().get_int("stash_type")) +
                                 " (only 1, float32 statistics, is supported)");
  const Shape& x = ctx.input(0).shape;
  const int64_t axis = normalized_axis(ctx.attrs(), x.size());
  if (axis < 0)
    return ctx.error("axis " + std::to_string(ctx.attrs().get_int("axis")) + " is out of range for X of rank " +
                     std::to_string(x.size()));
  const Shape normalized(x.begin() + axis, x.end());
  static const char* const kNames[] = {"X", "Scale", "B"};
  for (size_t i = 1; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) continue;
    Shape out;
    if (!broadcast_shapes(normalized, ctx.input(i).shape, &out) || out != normalized)
      return ctx.error(std::string(kNames[i]) + " shape " + shape_to_string(ctx.input(i).shape) +
                       " does not broadcast to X's normalized shape " + shape_to_string(normalized));
  }
  ctx.set_output(0, DType::kFloat32, x);
  for (size_t o = 1; o < ctx.num_outputs(); ++o) ctx.set_output(o, DType::kFloat32, statistics_shape(x, axis));
  return Status::ok();
}

// Two reductions and about eight elementwise operations per element.
int64_t layer_norm_flops(const InferContext& ctx) {
  return saturating_mul(int64_t{10}, shape_numel(ctx.input(0).shape));
}

// Appends the nodes of lower_layer_norms for `node`.
class Lowering {
 public:
  Lowering(ir::Graph& graph, const ir::Node& node, std::vector<ir::Node>& out)
      : graph_(graph), node_(node), out_(out) {}

  Status run() {
    const ir::ValueId x = node_.inputs[0];
    const Shape x_shape = graph_.value(x).shape;  // copies: add_value moves the values
    const int64_t axis = normalized_axis(node_.attrs, x_shape.size());
    const Shape stats = statistics_shape(x_shape, axis);
    std::vector<int64_t> axes;
    for (int64_t d = axis; d < static_cast<int64_t>(x_shape.size()); ++d) axes.push_back(d);
    const Shape axes_shape = {static_cast<int64_t>(axes.size())};
    const ir::ValueId axes_value = constant("axes", DType::kInt64, axes_shape, Tensor::from_int64s(axes_shape, axes));
    const float epsilon_value = node_.attrs.get_float("epsilon");
    const ir::ValueId epsilon =
        constant("epsilon", DType::kFloat32, Shape{}, Tensor::from_floats(Shape{}, {&epsilon_value, 1}));

    const ir::ValueId mean = emit(OpKind::kReduceMean, "mean", {x, axes_value}, stats, output(1));
    const ir::ValueId centered = emit(OpKind::kSub, "centered", {x, mean}, x_shape);
    const ir::ValueId square = emit(OpKind::kMul, "square", {centered, centered}, x_shape);
    const ir::ValueId variance = emit(OpKind::kReduceMean, "variance", {square, axes_value}, stats);
    const ir::ValueId shifted = emit(OpKind::kAdd, "variance_epsilon", {variance, epsilon}, stats);
    const ir::ValueId deviation = emit(OpKind::kSqrt, "deviation", {shifted}, stats);
    const ir::ValueId normalized = emit(OpKind::kDiv, "normalized", {centered, deviation}, x_shape);
    const bool has_bias = node_.inputs.size() > 2 && node_.inputs[2] != ir::kNoValue;
    const ir::ValueId scaled =
        emit(OpKind::kMul, "scaled", {normalized, node_.inputs[1]}, x_shape, has_bias ? ir::kNoValue : output(0));
    if (has_bias) emit(OpKind::kAdd, "biased", {scaled, node_.inputs[2]}, x_shape, output(0));
    if (output(2) != ir::kNoValue) emit(OpKind::kReciprocal, "inv_std_dev", {deviation}, stats, output(2));
    return Status::ok();
  }

 private:
  ir::ValueId output(size_t i) const { return i < node_.outputs.size() ? node_.outputs[i] : ir::kNoValue; }

  ir::ValueId constant(const std::string& what, DType dtype, const Shape& shape, Tensor data) {
    return graph_.add_value({graph_.unused_value_name(node_.name + "/" + what), dtype, shape, std::move(data), -1});
  }

  // A node `op` of `inputs` writing `into` (one of the LayerNormalization's outputs), else a new value of `shape`.
  ir::ValueId emit(OpKind op, const std::string& what, std::vector<ir::ValueId> inputs, const Shape& shape,
                   ir::ValueId into = ir::kNoValue) {
    if (into == ir::kNoValue)
      into = graph_.add_value({graph_.unused_value_name(node_.name + "/" + what), DType::kFloat32, shape,
                               std::nullopt, -1});
    ir::Node n;
    n.name = node_.name + "/" + what;
    n.op = op;
    n.opset = node_.opset;
    n.inputs = std::move(inputs);
    n.outputs = {into};
    fill_default_attributes(n);
    out_.push_back(std::move(n));
    return into;
  }

  ir::Graph& graph_;
  const ir::Node& node_;
  std::vector<ir::Node>& out_;
};

Status lower_one(ir::Graph& graph, const ir::Node& node, std::vector<ir::Node>& out) {
  return Lowering(graph, node, out).run();
}

}  // namespace

const OpDescriptor& describe_LayerNormalization() {
  static const OpDescriptor d{.kind = OpKind::kLayerNormalization,
                              .min_inputs = 2,
                              .max_inputs = 3,
                              .max_outputs = 3,
                              .min_opset = 17,
                              .attrs = {attr_int("axis", -1), attr_float("epsilon", 1e-5f), attr_int("stash_type", 1)},
                              .infer = infer_layer_norm,
                              .flops = layer_norm_flops};
  return d;
}

Status lower_layer_norms(ir::Graph& graph) {
  return lower_each(graph, OpKind::kLayerNormalization, lower_one, "LayerNormalization");
}

}  // namespace ucudnn
