// Descriptors of ReduceMean, Softmax and LogSoftmax (float32).
//
// ReduceMean (opset 18 form): optional constant `axes` input (the importer
// turns older `axes` attributes into it), keepdims, noop_with_empty_axes.
// Softmax/LogSoftmax: `axis` is optional; its default and meaning depend on
// the opset. Note [softmax axis by opset]: before opset 13 the input is
// coerced to 2-D at `axis` (default 1) and normalised over all trailing dims
// flattened together; from opset 13 it is normalised over the one dim `axis`
// (default -1). The CPU kernel reads node.opset the same way.
#include <set>

#include "runtime/core/bytes.h"
#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {

Status reduce_mean_infer(InferContext& ctx) {
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(0, {DType::kFloat32}));
  const Shape& in = ctx.input(0).shape;
  const int64_t rank = static_cast<int64_t>(in.size());
  const bool keepdims = ctx.attrs().get_int("keepdims") != 0;
  const bool noop = ctx.attrs().get_int("noop_with_empty_axes") != 0;
  std::vector<bool> reduce(in.size(), false);
  std::vector<int64_t> axes;
  if (ctx.has_input(1)) {
    UCUDNN_RETURN_IF_ERROR(ctx.expect_constant(1, "axes"));
    auto v = ctx.input(1).constant->to_int64_vector();
    if (!v) return ctx.error("axes: " + v.status().message());
    axes = std::move(v).value();
  }
  if (axes.empty()) {
    if (noop) {
      ctx.set_output(0, DType::kFloat32, in);
      return Status::ok();
    }
    reduce.assign(in.size(), true);
  }
  for (int64_t a : axes) {
    const int64_t n = normalize_axis(a, rank);
    if (n < 0) return ctx.error("axis " + std::to_string(a) + " is out of range for rank " + std::to_string(rank));
    if (reduce[n]) return ctx.error("axis " + std::to_string(a) + " is repeated");
    reduce[n] = true;
  }
  Shape out;
  for (size_t d = 0; d < in.size(); ++d) {
    if (!reduce[d]) out.push_back(in[d]);
    else if (keepdims) out.push_back(1);
  }
  ctx.set_output(0, DType::kFloat32, std::move(out));
  return Status::ok();
}

Status softmax_infer(InferContext& ctx) {
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(0, {DType::kFloat32}));
  const Shape& in = ctx.input(0).shape;
  const int64_t rank = static_cast<int64_t>(in.size());
  const int64_t axis = ctx.attrs().has("axis") ? ctx.attrs().get_int("axis") : (ctx.opset() < 13 ? 1 : -1);
  if (rank == 0) return ctx.error("input must have rank >= 1");
  if (normalize_axis(axis, rank) < 0)
    return ctx.error("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  ctx.set_output(0, DType::kFloat32, in);
  return Status::ok();
}

int64_t input_numel(const InferContext& ctx) { return shape_numel(ctx.input(0).shape); }
int64_t five_flops_per_element(const InferContext& ctx) {
  return saturating_mul(int64_t{5}, shape_numel(ctx.output(0).shape));
}

}  // namespace

const OpDescriptor& describe_ReduceMean() {
  static const OpDescriptor d{.kind = OpKind::kReduceMean,
                              .min_inputs = 1,
                              .max_inputs = 2,
                              .min_opset = 1,
                              .attrs = {attr_int("keepdims", 1), attr_int("noop_with_empty_axes", 0)},
                              .infer = reduce_mean_infer,
                              .flops = input_numel};
  return d;
}

const OpDescriptor& describe_Softmax() {
  static const OpDescriptor d{.kind = OpKind::kSoftmax,
                              .min_opset = 1,
                              .attrs = {attr_optional("axis", ir::AttrType::kInt)},
                              .infer = softmax_infer,
                              .flops = five_flops_per_element};
  return d;
}

const OpDescriptor& describe_LogSoftmax() {
  static const OpDescriptor d{.kind = OpKind::kLogSoftmax,
                              .min_opset = 1,
                              .attrs = {attr_optional("axis", ir::AttrType::kInt)},
                              .infer = softmax_infer,
                              .flops = five_flops_per_element};
  return d;
}

}  // namespace ucudnn
