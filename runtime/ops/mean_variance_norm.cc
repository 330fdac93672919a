// Descriptor and lowering of MeanVarianceNormalization (mean_variance_norm.h).
#include "runtime/ops/mean_variance_norm.h"

#include <algorithm>
#include <string>
#include <vector>

#include "runtime/core/bytes.h"
#include "runtime/ops/lowering.h"
#include "runtime/ops/normalization_lowering.h"
#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {

constexpr float kEpsilon = 1e-9f;  // the spec's, added to the standard deviation

// `axes` normalized into [0, rank), sorted; InvalidArgument for one out of range or repeated.
Expected<std::vector<int64_t>> normalized_axes(const std::vector<int64_t>& axes, int64_t rank) {
  if (axes.empty()) return invalid_argument("axes is empty (nothing to normalize over)");
  std::vector<int64_t> out;
  for (int64_t a : axes) {
    const int64_t n = normalize_axis(a, rank);
    if (n < 0)
      return invalid_argument("axis " + std::to_string(a) + " is out of range for X of rank " + std::to_string(rank));
    out.push_back(n);
  }
  std::sort(out.begin(), out.end());
  if (std::adjacent_find(out.begin(), out.end()) != out.end())
    return invalid_argument("axes " + shape_to_string(axes) + " repeat an axis");
  return out;
}

Status mvn_infer(InferContext& ctx) {
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(0, {DType::kFloat32}));
  const Shape& x = ctx.input(0).shape;
  const Expected<std::vector<int64_t>> axes =
      normalized_axes(ctx.attrs().get_ints("axes"), static_cast<int64_t>(x.size()));
  if (!axes) return ctx.error(axes.status().message());
  ctx.set_output(0, DType::kFloat32, x);
  return Status::ok();
}

// Two reductions and about seven elementwise operations per element.
int64_t mvn_flops(const InferContext& ctx) { return saturating_mul(int64_t{9}, shape_numel(ctx.input(0).shape)); }

Status lower_one(ir::Graph& graph, const ir::Node& node, std::vector<ir::Node>& out) {
  const auto rank = static_cast<int64_t>(graph.value(node.inputs[0]).shape.size());
  const std::vector<int64_t> axes = normalized_axes(node.attrs.get_ints("axes"), rank).value();
  NormalizationLowering lowering(graph, node, out);
  return lowering.run(node.inputs[0], axes, kEpsilon, ir::kNoValue, ir::kNoValue, node.outputs[0],
                      NormalizationLowering::EpsilonAt::kAfterSqrt);
}

}  // namespace

const OpDescriptor& describe_MeanVarianceNormalization() {
  static const OpDescriptor d{.kind = OpKind::kMeanVarianceNormalization,
                              .min_opset = 9,
                              .attrs = {attr_ints("axes", {0, 2, 3})},
                              .infer = mvn_infer,
                              .flops = mvn_flops};
  return d;
}

Status lower_mean_variance_norms(ir::Graph& graph) {
  return lower_each(graph, OpKind::kMeanVarianceNormalization, lower_one, "MeanVarianceNormalization");
}

}  // namespace ucudnn
