// The lowering of Upsample into a Resize (upsample.h). Its output index i reads source
// coordinate i / scale (Resize's "asymmetric" transformation): mode "nearest" takes the floor of it
// (np.repeat for integer scales, ONNX's reference), "linear" interpolates, as ONNX Runtime does.
#include "onnx_import/lowering/upsample.h"

#include <string>
#include <utility>
#include <vector>

#include "onnx_import/lowering/lowering_builder.h"
#include "runtime/ops/op_descriptor.h"
#include "runtime/ops/upsample.h"

namespace ucudnn {

namespace {

Status lower_one(ir::Graph& graph, const ir::Node& node, std::vector<ir::Node>& out) {
  const Tensor* input = node.inputs.size() > 1 && node.inputs[1] != ir::kNoValue
                            ? &*graph.value(node.inputs[1]).constant
                            : nullptr;
  UCUDNN_ASSIGN_OR_RETURN(const std::vector<float> scales, upsample_scales(node, input));
  LoweringBuilder build(graph, node, out, 13);
  ir::Attributes attrs;
  attrs.set("mode", node.attrs.get_string("mode"));
  attrs.set("coordinate_transformation_mode", std::string("asymmetric"));
  attrs.set("nearest_mode", std::string("floor"));
  const Shape y = graph.value(node.outputs[0]).shape;
  const ir::ValueId scales_value =
      build.constant("scales", Tensor::from_floats({static_cast<int64_t>(scales.size())}, scales));
  build.emit(OpKind::kResize, "", {node.inputs[0], ir::kNoValue, scales_value}, DType::kFloat32, y,
             node.outputs[0], std::move(attrs));
  return Status::ok();
}

}  // namespace

Status lower_upsamples(ir::Graph& graph) { return lower_each(graph, OpKind::kUpsample, lower_one, "Upsample"); }

}  // namespace ucudnn
