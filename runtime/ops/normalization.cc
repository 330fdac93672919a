// Descriptors of BatchNormalization (inference form only) and LRN.
// BatchNormalization: X [N, C, ...], scale/B/mean/var [C] → Y like X; attributes
// epsilon 1e-5, momentum 0.9, training_mode 0 (1 → Unsupported, as are the
// running-statistics outputs). LRN: X [N, C, ...] → Y like X; alpha 1e-4,
// beta 0.75, bias 1, size (required, odd or even as the spec allows).
#include "runtime/core/bytes.h"
#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {

Status infer_batch_norm(InferContext& ctx) {
  for (size_t i = 0; i < 5; ++i) UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(i, {DType::kFloat32}));
  if (ctx.attrs().has("training_mode") && ctx.attrs().get_int("training_mode") != 0)
    return ctx.unsupported_error("training_mode = 1 (only inference BatchNormalization is supported)");
  if (ctx.num_outputs() > 1)
    return ctx.unsupported_error("the running mean/variance outputs (training mode) are not supported");
  const Shape& x = ctx.input(0).shape;
  if (x.size() < 2) return ctx.error("X must have rank >= 2 ([N, C, ...]), got rank " + std::to_string(x.size()));
  static const char* const kNames[] = {"X", "scale", "B", "input_mean", "input_var"};
  for (size_t i = 1; i < 5; ++i)
    if (ctx.input(i).shape != Shape{x[1]})
      return ctx.error(std::string(kNames[i]) + " must have shape [" + std::to_string(x[1]) + "] (X's channels), got " +
                       shape_to_string(ctx.input(i).shape));
  ctx.set_output(0, DType::kFloat32, x);
  return Status::ok();
}

Status infer_lrn(InferContext& ctx) {
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(0, {DType::kFloat32}));
  const Shape& x = ctx.input(0).shape;
  if (x.size() < 3) return ctx.error("X must have rank >= 3 ([N, C, spatial...]), got rank " + std::to_string(x.size()));
  if (!ctx.attrs().has("size")) return ctx.error("the size attribute is required");
  if (ctx.attrs().get_int("size") < 1)
    return ctx.error("size " + std::to_string(ctx.attrs().get_int("size")) + " must be >= 1");
  ctx.set_output(0, DType::kFloat32, x);
  return Status::ok();
}

// Inference BN is one multiply-add per element.
int64_t batch_norm_flops(const InferContext& ctx) {
  return saturating_mul(int64_t{2}, shape_numel(ctx.input(0).shape));
}

// size multiply-adds for the sum of squares, then a power and a division.
int64_t lrn_flops(const InferContext& ctx) {
  const int64_t per_element = saturating_mul(int64_t{2}, ctx.attrs().get_int("size")) + 3;  // size >= 1: no wrap
  return saturating_mul(shape_numel(ctx.input(0).shape), per_element);
}

}  // namespace

const OpDescriptor& describe_BatchNormalization() {
  static const OpDescriptor d{.kind = OpKind::kBatchNormalization,
                              .min_inputs = 5,
                              .max_inputs = 5,
                              .max_outputs = 5,
                              .min_opset = 9,
                              .attrs = {attr_float("epsilon", 1e-5f), attr_float("momentum", 0.9f),
                                        attr_int("training_mode", 0)},
                              .infer = infer_batch_norm,
                              .flops = batch_norm_flops};
  return d;
}

const OpDescriptor& describe_LRN() {
  static const OpDescriptor d{.kind = OpKind::kLRN,
                              .min_opset = 1,
                              .attrs = {attr_float("alpha", 1e-4f), attr_float("beta", 0.75f), attr_float("bias", 1.0f),
                                        attr_required("size", ir::AttrType::kInt)},
                              .infer = infer_lrn,
                              .flops = lrn_flops};
  return d;
}

}  // namespace ucudnn
