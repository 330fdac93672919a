// Descriptors of the optimizer updates (internal ops, docs/TRAINING.md): one node per parameter,
// exactly torch.optim.SGD and torch.optim.AdamW (amsgrad off, maximize off).
//   SgdUpdate:   (param, grad, momentum_buffer, lr float32 [1], step int64 [1]) → (param_out,
//                momentum_buffer_out); attributes momentum 0, dampening 0, weight_decay 0, nesterov 0.
//   AdamWUpdate: (param, grad, m, v, lr [1], step [1]) → (param_out, m_out, v_out); attributes
//                beta1 0.9, beta2 0.999, epsilon 1e-8, weight_decay 0.01 (PyTorch's defaults).
// lr and step are tensors so a schedule changes them without re-planning; step counts updates from 1.
// Each output may share memory with its input (in place): the kernels read index i before writing it.
// With momentum 0 SGD keeps no state: momentum_buffer_out is momentum_buffer, unchanged.
#include <string>

#include "runtime/core/bytes.h"
#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {

// The state tensors (inputs 0 .. state_count-1) share param's shape; lr and step follow them.
Status infer_update(InferContext& ctx, size_t state_count, const char* const* names) {
  const Shape& param = ctx.input(0).shape;
  for (size_t i = 0; i < state_count; ++i) {
    UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(i, {DType::kFloat32}));
    if (ctx.input(i).shape != param)
      return ctx.error(std::string(names[i]) + " must have param's shape " + shape_to_string(param) + ", got " +
                       shape_to_string(ctx.input(i).shape));
  }
  const size_t lr = state_count, step = state_count + 1;
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(lr, {DType::kFloat32}));
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(step, {DType::kInt64}));
  if (shape_numel(ctx.input(lr).shape) != 1 || ctx.input(lr).shape.size() > 1)
    return ctx.error("lr must be one float32 value (shape [1]), got " + shape_to_string(ctx.input(lr).shape));
  if (shape_numel(ctx.input(step).shape) != 1 || ctx.input(step).shape.size() > 1)
    return ctx.error("step must be one int64 value (shape [1]), got " + shape_to_string(ctx.input(step).shape));
  for (size_t o = 0; o < ctx.num_outputs(); ++o) ctx.set_output(o, DType::kFloat32, param);
  return Status::ok();
}

Status expect_non_negative(const InferContext& ctx, const char* name) {
  const float value = ctx.attrs().get_float(name);
  if (!(value >= 0.0f)) return ctx.error(std::string(name) + " " + std::to_string(value) + " must be >= 0");
  return Status::ok();
}

Status infer_sgd(InferContext& ctx) {
  static const char* const kNames[] = {"param", "grad", "momentum_buffer"};
  for (const char* name : {"momentum", "dampening", "weight_decay"})
    UCUDNN_RETURN_IF_ERROR(expect_non_negative(ctx, name));
  const int64_t nesterov = ctx.attrs().get_int("nesterov");
  if (nesterov != 0 && nesterov != 1) return ctx.error("nesterov " + std::to_string(nesterov) + " must be 0 or 1");
  // torch.optim.SGD refuses the same: Nesterov momentum needs a momentum and no dampening.
  if (nesterov == 1 && (ctx.attrs().get_float("momentum") <= 0.0f || ctx.attrs().get_float("dampening") != 0.0f))
    return ctx.error("nesterov = 1 requires momentum > 0 and dampening = 0 (as torch.optim.SGD)");
  return infer_update(ctx, 3, kNames);
}

Status infer_adamw(InferContext& ctx) {
  static const char* const kNames[] = {"param", "grad", "m", "v"};
  for (const char* name : {"beta1", "beta2"}) {
    const float beta = ctx.attrs().get_float(name);
    if (!(beta >= 0.0f && beta < 1.0f))
      return ctx.error(std::string(name) + " " + std::to_string(beta) + " must be in [0, 1)");
  }
  for (const char* name : {"epsilon", "weight_decay"}) UCUDNN_RETURN_IF_ERROR(expect_non_negative(ctx, name));
  return infer_update(ctx, 4, kNames);
}

// Per element: SGD's weight decay, momentum and step are 3 multiply-adds; AdamW's about 6 plus a
// square root and a division.
int64_t sgd_flops(const InferContext& ctx) { return saturating_mul(int64_t{6}, shape_numel(ctx.input(0).shape)); }
int64_t adamw_flops(const InferContext& ctx) { return saturating_mul(int64_t{14}, shape_numel(ctx.input(0).shape)); }

}  // namespace

const OpDescriptor& describe_SgdUpdate() {
  static const OpDescriptor d{.kind = OpKind::kSgdUpdate,
                              .min_inputs = 5,
                              .max_inputs = 5,
                              .min_outputs = 2,
                              .max_outputs = 2,
                              .attrs = {attr_float("momentum", 0.0f), attr_float("dampening", 0.0f),
                                        attr_float("weight_decay", 0.0f), attr_int("nesterov", 0)},
                              .infer = infer_sgd,
                              .flops = sgd_flops,
                              .internal = true};
  return d;
}

const OpDescriptor& describe_AdamWUpdate() {
  static const OpDescriptor d{.kind = OpKind::kAdamWUpdate,
                              .min_inputs = 6,
                              .max_inputs = 6,
                              .min_outputs = 3,
                              .max_outputs = 3,
                              .attrs = {attr_float("beta1", 0.9f), attr_float("beta2", 0.999f),
                                        attr_float("epsilon", 1e-8f), attr_float("weight_decay", 0.01f)},
                              .infer = infer_adamw,
                              .flops = adamw_flops,
                              .internal = true};
  return d;
}

}  // namespace ucudnn
