// The shape checks Conv and ConvTranspose share (conv_checks.h).
#include "runtime/ops/conv_checks.h"

#include <string>

namespace ucudnn {

Expected<int64_t> checked_conv_group(InferContext& ctx, const char* what) {
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(0, {DType::kFloat32}));
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(1, {DType::kFloat32}));
  if (ctx.has_input(2)) UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(2, {DType::kFloat32}));
  const Shape& x = ctx.input(0).shape;
  const Shape& w = ctx.input(1).shape;
  if (x.size() < 3) return ctx.error("X must have rank >= 3 ([N, C, spatial...]), got rank " + std::to_string(x.size()));
  if (w.size() != x.size())
    return ctx.error("W has rank " + std::to_string(w.size()) + " but X has rank " + std::to_string(x.size()));
  if (x.size() > 5)
    return ctx.unsupported_error(std::to_string(x.size() - 2) + "-D " + what + "; ucudnn supports 1-D to 3-D");
  const int64_t group = ctx.attrs().has("group") ? ctx.attrs().get_int("group") : 1;
  if (group < 1) return ctx.error("group " + std::to_string(group) + " must be >= 1");
  if (x[1] % group != 0)
    return ctx.error("group " + std::to_string(group) + " does not divide the input channels " + std::to_string(x[1]));
  return group;
}

Expected<std::vector<int64_t>> checked_conv_kernel(InferContext& ctx, int64_t filters) {
  const Shape& w = ctx.input(1).shape;
  std::vector<int64_t> kernel(w.begin() + 2, w.end());
  if (ctx.attrs().has("kernel_shape") && ctx.attrs().get_ints("kernel_shape") != kernel)
    return ctx.error("kernel_shape " + shape_to_string(ctx.attrs().get_ints("kernel_shape")) +
                     " does not match W's spatial dims " + shape_to_string(kernel));
  if (ctx.has_input(2) && ctx.input(2).shape != Shape{filters})
    return ctx.error("B must have shape [" + std::to_string(filters) + "], got " + shape_to_string(ctx.input(2).shape));
  return kernel;
}

}  // namespace ucudnn
