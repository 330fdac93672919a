// TopK (top_k.h): K's reading and the descriptor.
#include "runtime/ops/top_k.h"

#include <string>
#include <vector>

#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

Expected<int64_t> top_k_count(const Tensor& k, int64_t axis_size) {
  UCUDNN_ASSIGN_OR_RETURN(std::vector<int64_t> values, k.to_int64_vector());
  if (values.size() != 1) return invalid_argument("K must be one int64 value, got " + k.describe());
  if (values[0] < 0 || values[0] > axis_size)
    return invalid_argument("K = " + std::to_string(values[0]) + " is outside 0.." + std::to_string(axis_size) +
                            " (the axis's size)");
  return values[0];
}

namespace {

Status top_k_infer(InferContext& ctx) {
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(0, {DType::kFloat32, DType::kInt32, DType::kInt64}));
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(1, {DType::kInt64}));
  UCUDNN_RETURN_IF_ERROR(ctx.expect_constant(1, "K"));
  const Shape& x = ctx.input(0).shape;
  const int64_t axis = normalize_axis(ctx.attrs().get_int("axis"), static_cast<int64_t>(x.size()));
  if (axis < 0)
    return ctx.error("axis " + std::to_string(ctx.attrs().get_int("axis")) + " is out of range for rank " +
                     std::to_string(x.size()));
  const Expected<int64_t> k = top_k_count(*ctx.input(1).constant, x[static_cast<size_t>(axis)]);
  if (!k) return ctx.error(k.status().message());
  Shape y = x;
  y[static_cast<size_t>(axis)] = *k;
  ctx.set_output(0, ctx.input(0).dtype, y);
  if (ctx.num_outputs() > 1) ctx.set_output(1, DType::kInt64, y);
  return Status::ok();
}

}  // namespace

const OpDescriptor& describe_TopK() {
  static const OpDescriptor d{.kind = OpKind::kTopK,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .max_outputs = 2,
                              .min_opset = 10,
                              .attrs = {attr_int("axis", -1), attr_int("largest", 1), attr_int("sorted", 1)},
                              .infer = top_k_infer};
  return d;
}

}  // namespace ucudnn
