// The lowering of Gelu (gelu.h).
#include "onnx_import/lowering/gelu.h"

#include <cmath>
#include <vector>

#include "onnx_import/lowering/lowering_builder.h"

namespace ucudnn {

namespace {

Status lower_one(ir::Graph& graph, const ir::Node& node, std::vector<ir::Node>& out) {
  const ir::ValueId x = node.inputs[0];
  const Shape shape = graph.value(x).shape;
  const DType f32 = DType::kFloat32;
  LoweringBuilder build(graph, node, out, node.opset);
  const auto scalar = [&](const std::string& what, double value) {
    return build.constant(what, Tensor::from_floats(Shape{}, std::vector<float>{static_cast<float>(value)}));
  };
  const auto op = [&](OpKind kind, const std::string& what, ir::ValueId a, ir::ValueId b = ir::kNoValue,
                      ir::ValueId into = ir::kNoValue) {
    std::vector<ir::ValueId> inputs = {a};
    if (b != ir::kNoValue) inputs.push_back(b);
    return build.emit(kind, what, std::move(inputs), f32, shape, into);
  };
  ir::ValueId phi;  // the bracket: 1 + erf(x / √2), or 1 + tanh(√(2/π) · (x + 0.044715 · x³))
  if (node.attrs.get_string("approximate") == "tanh") {
    const ir::ValueId cube = op(OpKind::kMul, "cube", x, op(OpKind::kMul, "square", x, x));
    const ir::ValueId inner = op(OpKind::kAdd, "inner", x, op(OpKind::kMul, "cubic_term", cube, scalar("c", 0.044715)));
    const ir::ValueId t =
        op(OpKind::kTanh, "tanh", op(OpKind::kMul, "scaled", inner, scalar("sqrt_2_over_pi", std::sqrt(2.0 / M_PI))));
    phi = op(OpKind::kAdd, "one_plus", t, scalar("one", 1.0));
  } else {
    const ir::ValueId e = op(OpKind::kErf, "erf", op(OpKind::kDiv, "scaled", x, scalar("sqrt_2", std::sqrt(2.0))));
    phi = op(OpKind::kAdd, "one_plus", e, scalar("one", 1.0));
  }
  op(OpKind::kMul, "half", op(OpKind::kMul, "x_phi", x, phi), scalar("half_value", 0.5), node.outputs[0]);
  return Status::ok();
}

}  // namespace

Status lower_gelus(ir::Graph& graph) { return lower_each(graph, OpKind::kGelu, lower_one, "Gelu"); }

}  // namespace ucudnn
