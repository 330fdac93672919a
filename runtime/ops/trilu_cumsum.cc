// Trilu and CumSum (trilu_cumsum.h): the shared readings of their constant inputs, and the descriptors.
#include "runtime/ops/trilu_cumsum.h"

#include <string>
#include <vector>

#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

Expected<int64_t> trilu_diagonal(const Tensor* k) {
  if (k == nullptr) return int64_t{0};
  UCUDNN_ASSIGN_OR_RETURN(std::vector<int64_t> values, k->to_int64_vector());
  if (values.size() != 1) return invalid_argument("k must be one int64 value, got " + k->describe());
  return values[0];
}

Expected<int64_t> cumsum_axis(const Tensor& axis, int64_t rank) {
  UCUDNN_ASSIGN_OR_RETURN(std::vector<int64_t> values, axis.to_int64_vector());
  if (values.size() != 1) return invalid_argument("axis must be one int32 or int64 value, got " + axis.describe());
  const int64_t a = normalize_axis(values[0], rank);
  if (a < 0) return invalid_argument("axis " + std::to_string(values[0]) + " is out of range for rank " +
                                     std::to_string(rank));
  return a;
}

namespace {

Status trilu_infer(InferContext& ctx) {
  if (ctx.input(0).shape.size() < 2)
    return ctx.error("input must have at least 2 dims, got shape " + shape_to_string(ctx.input(0).shape));
  if (ctx.has_input(1)) {
    UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(1, {DType::kInt64}));
    UCUDNN_RETURN_IF_ERROR(ctx.expect_constant(1, "k"));
    const Expected<int64_t> k = trilu_diagonal(ctx.input(1).constant);
    if (!k) return ctx.error(k.status().message());
  }
  ctx.set_output(0, ctx.input(0).dtype, ctx.input(0).shape);
  return Status::ok();
}

Status cumsum_infer(InferContext& ctx) {
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(0, {DType::kFloat32, DType::kInt32, DType::kInt64}));
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(1, {DType::kInt32, DType::kInt64}));
  UCUDNN_RETURN_IF_ERROR(ctx.expect_constant(1, "axis"));
  const Expected<int64_t> axis =
      cumsum_axis(*ctx.input(1).constant, static_cast<int64_t>(ctx.input(0).shape.size()));
  if (!axis) return ctx.error(axis.status().message());
  ctx.set_output(0, ctx.input(0).dtype, ctx.input(0).shape);
  return Status::ok();
}

int64_t one_per_element(const InferContext& ctx) { return shape_numel(ctx.output(0).shape); }

}  // namespace

const OpDescriptor& describe_Trilu() {
  static const OpDescriptor d{.kind = OpKind::kTrilu,
                              .min_inputs = 1,
                              .max_inputs = 2,
                              .min_opset = 14,
                              .attrs = {attr_int("upper", 1)},
                              .infer = trilu_infer};
  return d;
}

const OpDescriptor& describe_CumSum() {
  static const OpDescriptor d{.kind = OpKind::kCumSum,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .min_opset = 11,
                              .attrs = {attr_int("exclusive", 0), attr_int("reverse", 0)},
                              .infer = cumsum_infer,
                              .flops = one_per_element};
  return d;
}

}  // namespace ucudnn
