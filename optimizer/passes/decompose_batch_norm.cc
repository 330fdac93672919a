// decompose_batch_norm: an inference BatchNormalization that fold_batch_norm left (it does not read
// a Conv: pre-activation BN, BN after a Concat or an Add) becomes y = x·s + t, a Mul and an Add
// with constants s = γ/√(σ² + ε) and t = β − μ·s computed in double, shaped [1, C, 1, ..., 1] (x's
// rank) so they broadcast along axis 1. The two elementwise nodes are layout-free and fuse_pointwise
// joins them with their neighbours (a following Relu, a preceding Concat) into one pass.
//
// Applies when x is float32 of rank >= 2 and all four parameters are float32 constants of C elements.
#include <cmath>
#include <optional>

#include "optimizer/passes/passes.h"
#include "runtime/ir/layout.h"

namespace ucudnn::optimizer {

namespace {

const Tensor* float_constant(const ir::Graph& graph, ir::ValueId id, int64_t numel) {
  if (id == ir::kNoValue) return nullptr;
  const ir::Value& v = graph.value(id);
  return v.constant && v.dtype == DType::kFloat32 && v.constant->numel() == numel ? &*v.constant : nullptr;
}

struct ScaleShift {
  Tensor scale, shift;  // [1, C, 1, ..., 1]
};

// The BatchNormalization's scale and shift, or nothing when it does not qualify.
std::optional<ScaleShift> scale_shift_of(const ir::Graph& graph, const ir::Node& bn) {
  if (bn.op != OpKind::kBatchNormalization || bn.inputs.size() != 5 || bn.outputs.size() != 1) return std::nullopt;
  if (ir::is_channels_last(bn)) return std::nullopt;
  const ir::Value& x = graph.value(bn.inputs[0]);
  if (x.dtype != DType::kFloat32 || x.shape.size() < 2) return std::nullopt;
  const int64_t channels = x.shape[1];
  const Tensor* gamma = float_constant(graph, bn.inputs[1], channels);
  const Tensor* beta = float_constant(graph, bn.inputs[2], channels);
  const Tensor* mean = float_constant(graph, bn.inputs[3], channels);
  const Tensor* var = float_constant(graph, bn.inputs[4], channels);
  if (!gamma || !beta || !mean || !var) return std::nullopt;
  const double epsilon = bn.attrs.get_float("epsilon");
  Shape shape(x.shape.size(), 1);
  shape[1] = channels;
  std::vector<float> scale(static_cast<size_t>(channels)), shift(static_cast<size_t>(channels));
  for (int64_t c = 0; c < channels; ++c) {
    const double s = gamma->data<float>()[c] / std::sqrt(double{var->data<float>()[c]} + epsilon);
    scale[c] = static_cast<float>(s);
    shift[c] = static_cast<float>(beta->data<float>()[c] - mean->data<float>()[c] * s);
  }
  return ScaleShift{Tensor::from_floats(shape, scale), Tensor::from_floats(shape, shift)};
}

ir::Node elementwise(const ir::Node& bn, OpKind op, std::string name, ir::ValueId a, ir::ValueId b, ir::ValueId out) {
  ir::Node node;
  node.name = std::move(name);
  node.op = op;
  node.opset = bn.opset;
  node.inputs = {a, b};
  node.outputs = {out};
  return node;
}

}  // namespace

Status decompose_batch_norm(ir::Graph& graph, PassStats* stats) {
  std::vector<ir::Node> old_nodes = std::move(graph.nodes);
  graph.nodes.clear();
  for (ir::Node& bn : old_nodes) {
    std::optional<ScaleShift> p = scale_shift_of(graph, bn);
    if (!p) {
      graph.nodes.push_back(std::move(bn));
      continue;
    }
    const ir::ValueId x = bn.inputs[0], y = bn.outputs[0];
    const std::string y_name = graph.value(y).name;  // add_value may move values
    const Shape x_shape = graph.value(x).shape, c_shape = p->scale.shape();
    const ir::ValueId scale = graph.add_value({bn.name + ".scale", DType::kFloat32, c_shape, std::move(p->scale), -1});
    const ir::ValueId shift = graph.add_value({bn.name + ".shift", DType::kFloat32, c_shape, std::move(p->shift), -1});
    const ir::ValueId scaled = graph.add_value({y_name + ".scaled", DType::kFloat32, x_shape, std::nullopt, -1});
    graph.nodes.push_back(elementwise(bn, OpKind::kMul, bn.name + ".mul", x, scale, scaled));
    graph.nodes.push_back(elementwise(bn, OpKind::kAdd, bn.name + ".add", scaled, shift, y));
    ++stats->batch_norms_decomposed;
  }
  for (size_t n = 0; n < graph.nodes.size(); ++n)
    for (ir::ValueId id : graph.nodes[n].outputs)
      if (id != ir::kNoValue) graph.value(id).producer = static_cast<ir::NodeId>(n);
  graph.prune();  // the BatchNormalizations' parameters, unless something else reads them
  return Status::ok();
}

}  // namespace ucudnn::optimizer
