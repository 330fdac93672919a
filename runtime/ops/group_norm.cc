// Descriptor of GroupNormalization: X [N, C, ...] (rank >= 2), Scale and B ([G] at opset 18, [C] from
// opset 21; G = num_groups divides C) → Y like X; attributes num_groups (required), epsilon (1e-5),
// stash_type (opset 21; 1, float32 statistics, the only one accepted). It never reaches a backend: the
// importer lowers it (onnx_import/lowering/group_norm.h; Note [lowered ops], lowered_ops.h).
#include "runtime/ops/group_norm.h"

#include <string>

#include "runtime/core/bytes.h"
#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {

Status infer_group_norm(InferContext& ctx) {
  for (size_t i = 0; i < ctx.num_inputs(); ++i) UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(i, {DType::kFloat32}));
  if (ctx.attrs().get_int("stash_type") != 1)
    return ctx.unsupported_error("stash_type " + std::to_string(ctx.attrs().get_int("stash_type")) +
                                 " (only 1, float32 statistics, is supported)");
  const Shape& x = ctx.input(0).shape;
  if (x.size() < 2) return ctx.error("X must have rank >= 2 ([N, C, ...]), got " + shape_to_string(x));
  const int64_t groups = ctx.attrs().get_int("num_groups");
  if (groups <= 0 || x[1] % groups != 0)
    return ctx.error("num_groups " + std::to_string(groups) + " does not divide the " + std::to_string(x[1]) +
                     " channels");
  const int64_t n = group_norm_per_channel(ctx.opset()) ? x[1] : groups;
  static const char* const kNames[] = {"X", "scale", "bias"};
  for (size_t i = 1; i < 3; ++i)
    if (ctx.input(i).shape != Shape{n})
      return ctx.error(std::string(kNames[i]) + " shape " + shape_to_string(ctx.input(i).shape) + " is not [" +
                       std::to_string(n) + "] (" + (group_norm_per_channel(ctx.opset()) ? "C" : "num_groups") +
                       " at opset " + std::to_string(ctx.opset()) + ")");
  ctx.set_output(0, DType::kFloat32, x);
  return Status::ok();
}

// Two reductions and about eight elementwise operations per element.
int64_t group_norm_flops(const InferContext& ctx) {
  return saturating_mul(int64_t{10}, shape_numel(ctx.input(0).shape));
}

}  // namespace

bool group_norm_per_channel(int opset) { return opset >= 21; }

const OpDescriptor& describe_GroupNormalization() {
  static const OpDescriptor d{.kind = OpKind::kGroupNormalization,
                              .min_inputs = 3,
                              .max_inputs = 3,
                              .max_outputs = 1,
                              .min_opset = 18,
                              .attrs = {attr_required("num_groups", ir::AttrType::kInt),
                                        attr_float("epsilon", 1e-5f), attr_int("stash_type", 1)},
                              .infer = infer_group_norm,
                              .flops = group_norm_flops};
  return d;
}

}  // namespace ucudnn
