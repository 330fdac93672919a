// The lowering of MeanVarianceNormalization (mean_variance_norm.h).
#include "onnx_import/lowering/mean_variance_norm.h"

#include <vector>

#include "onnx_import/lowering/lowering_builder.h"
#include "onnx_import/lowering/normalization_lowering.h"
#include "runtime/ops/mean_variance_norm.h"

namespace ucudnn {

namespace {

constexpr float kEpsilon = 1e-9f;  // the spec's, added to the standard deviation

Status lower_one(ir::Graph& graph, const ir::Node& node, std::vector<ir::Node>& out) {
  const auto rank = static_cast<int64_t>(graph.value(node.inputs[0]).shape.size());
  const std::vector<int64_t> axes = mean_variance_norm_axes(node.attrs.get_ints("axes"), rank).value();
  NormalizationLowering lowering(graph, node, out);
  return lowering.run(node.inputs[0], axes, kEpsilon, ir::kNoValue, ir::kNoValue, node.outputs[0],
                      NormalizationLowering::EpsilonAt::kAfterSqrt);
}

}  // namespace

Status lower_mean_variance_norms(ir::Graph& graph) {
  return lower_each(graph, OpKind::kMeanVarianceNormalization, lower_one, "MeanVarianceNormalization");
}

}  // namespace ucudnn
