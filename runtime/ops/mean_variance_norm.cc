// Descriptor of MeanVarianceNormalization (opsets 9, 13): X → Y like X, normalized over `axes` (default
// [0, 2, 3]). The importer lowers it (onnx_import/lowering/mean_variance_norm.h).
#include "runtime/ops/mean_variance_norm.h"

#include <algorithm>
#include <string>
#include <vector>

#include "runtime/core/bytes.h"
#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {

Status mvn_infer(InferContext& ctx) {
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(0, {DType::kFloat32}));
  const Shape& x = ctx.input(0).shape;
  const Expected<std::vector<int64_t>> axes =
      mean_variance_norm_axes(ctx.attrs().get_ints("axes"), static_cast<int64_t>(x.size()));
  if (!axes) return ctx.error(axes.status().message());
  ctx.set_output(0, DType::kFloat32, x);
  return Status::ok();
}

// Two reductions and about seven elementwise operations per element.
int64_t mvn_flops(const InferContext& ctx) { return saturating_mul(int64_t{9}, shape_numel(ctx.input(0).shape)); }

}  // namespace

Expected<std::vector<int64_t>> mean_variance_norm_axes(const std::vector<int64_t>& axes, int64_t rank) {
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

const OpDescriptor& describe_MeanVarianceNormalization() {
  static const OpDescriptor d{.kind = OpKind::kMeanVarianceNormalization,
                              .min_opset = 9,
                              .attrs = {attr_ints("axes", {0, 2, 3})},
                              .infer = mvn_infer,
                              .flops = mvn_flops};
  return d;
}

}  // namespace ucudnn
