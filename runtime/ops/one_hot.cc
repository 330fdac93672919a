// Descriptor of OneHot (opset 9, 11): indices, depth (a constant), values [off, on] → values[1] where an
// index names the position along the new axis, values[0] elsewhere. The importer lowers it
// (onnx_import/lowering/one_hot.h).
#include "runtime/ops/one_hot.h"

#include <cmath>
#include <string>
#include <vector>

#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {

Status one_hot_infer(InferContext& ctx) {
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(0, {DType::kInt64, DType::kInt32, DType::kFloat32}));
  UCUDNN_RETURN_IF_ERROR(ctx.expect_constant(1, "depth"));
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(2, {DType::kFloat32, DType::kInt64, DType::kInt32, DType::kBool}));
  const Expected<int64_t> depth = one_hot_depth(*ctx.input(1).constant);
  if (!depth) return ctx.error(depth.status().message());
  if (*depth < 1 || *depth > (int64_t{1} << 31))
    return ctx.error("depth " + std::to_string(*depth) + " must lie in 1..2^31");
  if (shape_numel(ctx.input(2).shape) != 2)
    return ctx.error("values must hold two elements [off, on], got " + shape_to_string(ctx.input(2).shape));
  Shape out = ctx.input(0).shape;
  const int64_t axis = normalize_axis(ctx.attrs().get_int("axis"), static_cast<int64_t>(out.size()) + 1);
  if (axis < 0)
    return ctx.error("axis " + std::to_string(ctx.attrs().get_int("axis")) + " is out of range for an output of rank " +
                     std::to_string(out.size() + 1));
  out.insert(out.begin() + axis, *depth);
  ctx.set_output(0, ctx.input(2).dtype, std::move(out));
  return Status::ok();
}

}  // namespace

Expected<int64_t> one_hot_depth(const Tensor& depth) {
  if (depth.numel() != 1) return invalid_argument("depth must hold one value, got " + depth.describe());
  if (depth.dtype() == DType::kFloat32) {
    const float v = depth.data<float>()[0];
    if (!std::isfinite(v) || std::fabs(v) > 1e15f)
      return invalid_argument("depth " + std::to_string(v) + " is not a size");
    return static_cast<int64_t>(v);
  }
  UCUDNN_ASSIGN_OR_RETURN(const std::vector<int64_t> v, depth.to_int64_vector());
  return v[0];
}

const OpDescriptor& describe_OneHot() {
  static const OpDescriptor d{.kind = OpKind::kOneHot,
                              .min_inputs = 3,
                              .max_inputs = 3,
                              .min_opset = 9,
                              .attrs = {attr_int("axis", -1)},
                              .infer = one_hot_infer};
  return d;
}

}  // namespace ucudnn
