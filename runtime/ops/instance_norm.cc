// Descriptor of InstanceNormalization: X [N, C, D1, ...] (rank >= 3), Scale [C], B [C] → Y like X;
// attribute epsilon (1e-5). It never reaches a backend: the importer lowers it
// (onnx_import/lowering/instance_norm.h; Note [lowered ops], lowered_ops.h), so the pointwise part fuses and
// training differentiates the pieces.
#include <string>

#include "runtime/core/bytes.h"
#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {

Status infer_instance_norm(InferContext& ctx) {
  for (size_t i = 0; i < ctx.num_inputs(); ++i) UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(i, {DType::kFloat32}));
  const Shape& x = ctx.input(0).shape;
  if (x.size() < 3) return ctx.error("X must have rank >= 3 ([N, C, D1, ...]), got " + shape_to_string(x));
  static const char* const kNames[] = {"X", "scale", "B"};
  for (size_t i = 1; i < 3; ++i)
    if (ctx.input(i).shape != Shape{x[1]})
      return ctx.error(std::string(kNames[i]) + " shape " + shape_to_string(ctx.input(i).shape) + " is not [C] = [" +
                       std::to_string(x[1]) + "]");
  ctx.set_output(0, DType::kFloat32, x);
  return Status::ok();
}

// Two reductions and about eight elementwise operations per element.
int64_t instance_norm_flops(const InferContext& ctx) {
  return saturating_mul(int64_t{10}, shape_numel(ctx.input(0).shape));
}

}  // namespace

const OpDescriptor& describe_InstanceNormalization() {
  static const OpDescriptor d{.kind = OpKind::kInstanceNormalization,
                              .min_inputs = 3,
                              .max_inputs = 3,
                              .max_outputs = 1,
                              .min_opset = 1,
                              .attrs = {attr_float("epsilon", 1e-5f)},
                              .infer = infer_instance_norm,
                              .flops = instance_norm_flops};
  return d;
}

}  // namespace ucudnn
