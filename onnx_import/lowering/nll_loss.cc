// The lowering of the ONNX loss ops (nll_loss.h).
#include "onnx_import/lowering/nll_loss.h"

#include <algorithm>
#include <span>
#include <string>
#include <vector>

#include "onnx_import/lowering/lowering_builder.h"
#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {

ir::ValueId float_scalar(LoweringBuilder& build, const std::string& what, float value) {
  return build.constant(what, Tensor::from_floats({}, std::span<const float>(&value, 1)));
}

ir::ValueId int64_scalar(LoweringBuilder& build, const std::string& what, int64_t value) {
  return build.constant(what, Tensor::from_int64s({}, std::span<const int64_t>(&value, 1)));
}

// The loss of log-probabilities `x` [N, C, d...] against the node's target and weights, into its output 0.
void emit_nll(LoweringBuilder& build, const ir::Node& node, ir::ValueId x) {
  const ir::Graph& graph = build.graph();
  const DType f32 = DType::kFloat32, i64 = DType::kInt64;
  ir::ValueId target = node.inputs[1];
  const Shape t_shape = graph.value(target).shape;
  if (graph.value(target).dtype != i64) {
    ir::Attributes to;
    to.set("to", int64_t{7});  // TensorProto INT64
    target = build.emit(OpKind::kCast, "target_int64", {target}, i64, t_shape, ir::kNoValue, to);
  }
  const ir::ValueId class_zero = int64_scalar(build, "class_zero", 0);
  ir::ValueId ignored = ir::kNoValue;
  if (node.attrs.has("ignore_index")) {
    const ir::ValueId ignore = int64_scalar(build, "ignore_index", node.attrs.get_int("ignore_index"));
    ignored = build.emit(OpKind::kEqual, "ignored", {target, ignore}, DType::kBool, t_shape);
    target = build.emit(OpKind::kWhere, "class", {ignored, class_zero, target}, i64, t_shape);
  }
  // GatherElements takes -C..-1 as classes from the end; a loss's classes are 0..C-1, so a negative one
  // becomes C, which GatherElements refuses at run time as out of range, naming this node.
  const int64_t classes = graph.value(x).shape[1];
  const ir::ValueId negative = build.emit(OpKind::kLess, "negative", {target, class_zero}, DType::kBool, t_shape);
  target = build.emit(OpKind::kWhere, "checked_class", {negative, int64_scalar(build, "classes", classes), target},
                      i64, t_shape);
  Shape index_shape = t_shape;
  index_shape.insert(index_shape.begin() + 1, 1);
  const ir::ValueId index =
      build.emit(OpKind::kUnsqueeze, "class_index", {target, build.int64s("class_axis", {1})}, i64, index_shape);
  ir::Attributes class_axis;
  class_axis.set("axis", int64_t{1});
  const ir::ValueId picked = build.emit(OpKind::kGatherElements, "picked", {x, index}, f32, index_shape,
                                        ir::kNoValue, class_axis);
  const ir::ValueId picked_flat =
      build.emit(OpKind::kReshape, "picked_flat", {picked, build.int64s("picked_shape", t_shape)}, f32, t_shape);
  ir::ValueId weight = ir::kNoValue;  // w_i [N, d...], when not all 1
  if (node.inputs.size() > 2 && node.inputs[2] != ir::kNoValue)
    weight = build.emit(OpKind::kGather, "weight", {node.inputs[2], target}, f32, t_shape);
  if (ignored != ir::kNoValue) {
    const ir::ValueId kept = weight != ir::kNoValue ? weight : float_scalar(build, "one", 1.0f);
    weight = build.emit(OpKind::kWhere, "kept_weight", {ignored, float_scalar(build, "zero", 0.0f), kept}, f32,
                        t_shape);
  }
  const std::string reduction = node.attrs.get_string("reduction");
  const bool none = reduction == "none";
  const ir::ValueId y = node.outputs[0];
  ir::ValueId loss = build.emit(OpKind::kNeg, "negated", {picked_flat}, f32, t_shape,
                                none && weight == ir::kNoValue ? y : ir::kNoValue);
  if (weight != ir::kNoValue)
    loss = build.emit(OpKind::kMul, "weighted", {loss, weight}, f32, t_shape, none ? y : ir::kNoValue);
  if (none) return;
  ir::Attributes all;
  all.set("keepdims", int64_t{0});
  if (reduction == "sum") {
    build.emit(OpKind::kReduceSum, "sum", {loss}, f32, {}, y, all);
  } else if (weight == ir::kNoValue) {
    build.emit(OpKind::kReduceMean, "mean", {loss}, f32, {}, y, all);
  } else {
    const ir::ValueId total = build.emit(OpKind::kReduceSum, "sum", {loss}, f32, {}, ir::kNoValue, all);
    const ir::ValueId weights = build.emit(OpKind::kReduceSum, "weight_sum", {weight}, f32, {}, ir::kNoValue, all);
    build.emit(OpKind::kDiv, "mean", {total, weights}, f32, {}, y);
  }
}

Status lower_nll(ir::Graph& graph, const ir::Node& node, std::vector<ir::Node>& out) {
  LoweringBuilder build(graph, node, out, std::max(node.opset, 13));
  emit_nll(build, node, node.inputs[0]);
  return Status::ok();
}

Status lower_softmax_cross_entropy(ir::Graph& graph, const ir::Node& node, std::vector<ir::Node>& out) {
  LoweringBuilder build(graph, node, out, std::max(node.opset, 13));
  const bool wants_log_prob = node.outputs.size() > 1 && node.outputs[1] != ir::kNoValue;
  ir::Attributes class_axis;
  class_axis.set("axis", int64_t{1});
  const ir::ValueId log_prob =
      build.emit(OpKind::kLogSoftmax, "log_prob", {node.inputs[0]}, DType::kFloat32, graph.value(node.inputs[0]).shape,
                 wants_log_prob ? node.outputs[1] : ir::kNoValue, class_axis);
  emit_nll(build, node, log_prob);
  return Status::ok();
}

}  // namespace

Status lower_losses(ir::Graph& graph) {
  UCUDNN_RETURN_IF_ERROR(lower_each(graph, OpKind::kSoftmaxCrossEntropyLoss, lower_softmax_cross_entropy,
                                    "SoftmaxCrossEntropyLoss"));
  return lower_each(graph, OpKind::kNegativeLogLikelihoodLoss, lower_nll, "NegativeLogLikelihoodLoss");
}

}  // namespace ucudnn
