// GatherElements, ScatterElements and ScatterND (indexing.h): descriptors and the shared checks.
#include "runtime/ops/indexing.h"

#include <string>

#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

Expected<ScatterReduction> scatter_reduction(const std::string& name) {
  if (name == "none") return ScatterReduction::kNone;
  if (name == "add") return ScatterReduction::kAdd;
  if (name == "mul") return ScatterReduction::kMul;
  if (name == "max") return ScatterReduction::kMax;
  if (name == "min") return ScatterReduction::kMin;
  return invalid_argument("reduction '" + name + "' (none, add, mul, max and min are defined)");
}

Status check_indices(const std::vector<int64_t>& indices, const std::vector<int64_t>& dims, const std::string& where) {
  for (size_t i = 0; i < indices.size(); ++i) {
    const int64_t dim = dims[i % dims.size()];
    if (indices[i] < -dim || indices[i] >= dim)
      return invalid_argument(where + ": index " + std::to_string(indices[i]) + " is out of range for a dimension of " +
                              std::to_string(dim));
  }
  return Status::ok();
}

namespace {

Status expect_index_dtype(InferContext& ctx, size_t i) { return ctx.expect_dtype(i, {DType::kInt64, DType::kInt32}); }

// A reduction's name, and the dtypes a reduction other than none applies to.
Status check_reduction(InferContext& ctx) {
  const Expected<ScatterReduction> reduction = scatter_reduction(ctx.attrs().get_string("reduction"));
  if (!reduction) return ctx.error(reduction.status().message());
  const DType dtype = ctx.input(0).dtype;
  if (*reduction != ScatterReduction::kNone && dtype != DType::kFloat32 && dtype != DType::kInt32 &&
      dtype != DType::kInt64)
    return ctx.unsupported_error("reduction '" + ctx.attrs().get_string("reduction") + "' on " + dtype_name(dtype) +
                                 " (float32, int32 and int64 are supported)");
  return Status::ok();
}

// Constant indices checked now against the dims they index.
Status check_constant_indices(InferContext& ctx, size_t i, const std::vector<int64_t>& dims) {
  if (ctx.input(i).constant == nullptr) return Status::ok();
  UCUDNN_ASSIGN_OR_RETURN(std::vector<int64_t> values, ctx.input(i).constant->to_int64_vector());
  const Status s = check_indices(values, dims, "indices");
  return s.is_ok() ? s : ctx.error(s.message());
}

// GatherElements' and ScatterElements' indices against data: its rank, the axis in it, no dim past data's
// off the axis, constant values within the axis.
Status check_elements_indices(InferContext& ctx) {
  UCUDNN_RETURN_IF_ERROR(expect_index_dtype(ctx, 1));
  const Shape& data = ctx.input(0).shape;
  const Shape& indices = ctx.input(1).shape;
  const int64_t axis = normalize_axis(ctx.attrs().get_int("axis"), static_cast<int64_t>(data.size()));
  if (axis < 0 || indices.size() != data.size())
    return ctx.error("indices must have data's rank and axis lie in it (data " + shape_to_string(data) +
                     ", indices " + shape_to_string(indices) + ", axis " +
                     std::to_string(ctx.attrs().get_int("axis")) + ")");
  for (size_t d = 0; d < data.size(); ++d)
    if (static_cast<int64_t>(d) != axis && indices[d] > data[d])
      return ctx.error("indices " + shape_to_string(indices) + " exceed data " + shape_to_string(data) + " in dim " +
                       std::to_string(d));
  return check_constant_indices(ctx, 1, {data[static_cast<size_t>(axis)]});
}

Status gather_elements_infer(InferContext& ctx) {
  UCUDNN_RETURN_IF_ERROR(check_elements_indices(ctx));
  ctx.set_output(0, ctx.input(0).dtype, ctx.input(1).shape);
  return Status::ok();
}

Status scatter_elements_infer(InferContext& ctx) {
  UCUDNN_RETURN_IF_ERROR(check_reduction(ctx));
  UCUDNN_RETURN_IF_ERROR(check_elements_indices(ctx));
  if (ctx.input(2).shape != ctx.input(1).shape)
    return ctx.error("updates must have indices' shape " + shape_to_string(ctx.input(1).shape) + ", got " +
                     shape_to_string(ctx.input(2).shape));
  if (ctx.input(2).dtype != ctx.input(0).dtype) return ctx.error("updates must have data's dtype");
  ctx.set_output(0, ctx.input(0).dtype, ctx.input(0).shape);
  return Status::ok();
}

Status scatter_nd_infer(InferContext& ctx) {
  UCUDNN_RETURN_IF_ERROR(expect_index_dtype(ctx, 1));
  UCUDNN_RETURN_IF_ERROR(check_reduction(ctx));
  const Shape& data = ctx.input(0).shape;
  const Shape& indices = ctx.input(1).shape;
  if (indices.empty() || indices.back() < 1 || indices.back() > static_cast<int64_t>(data.size()))
    return ctx.error("indices' last dim (the tuple length) must be 1 to data's rank " + std::to_string(data.size()) +
                     ", indices are " + shape_to_string(indices));
  const auto k = static_cast<size_t>(indices.back());
  Shape updates(indices.begin(), indices.end() - 1);
  updates.insert(updates.end(), data.begin() + static_cast<int64_t>(k), data.end());
  if (ctx.input(2).shape != updates)
    return ctx.error("updates must have shape " + shape_to_string(updates) + " (indices' dims but the last, then data's "
                     "past the tuple), got " + shape_to_string(ctx.input(2).shape));
  if (ctx.input(2).dtype != ctx.input(0).dtype) return ctx.error("updates must have data's dtype");
  UCUDNN_RETURN_IF_ERROR(check_constant_indices(ctx, 1, std::vector<int64_t>(data.begin(), data.begin() + k)));
  ctx.set_output(0, ctx.input(0).dtype, data);
  return Status::ok();
}

}  // namespace

const OpDescriptor& describe_GatherElements() {
  static const OpDescriptor d{.kind = OpKind::kGatherElements,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .min_opset = 11,
                              .attrs = {attr_int("axis", 0)},
                              .infer = gather_elements_infer};
  return d;
}

const OpDescriptor& describe_ScatterElements() {
  static const OpDescriptor d{.kind = OpKind::kScatterElements,
                              .min_inputs = 3,
                              .max_inputs = 3,
                              .min_opset = 11,
                              .attrs = {attr_int("axis", 0), attr_string("reduction", "none")},
                              .infer = scatter_elements_infer};
  return d;
}

const OpDescriptor& describe_ScatterND() {
  static const OpDescriptor d{.kind = OpKind::kScatterND,
                              .min_inputs = 3,
                              .max_inputs = 3,
                              .min_opset = 11,
                              .attrs = {attr_string("reduction", "none")},
                              .infer = scatter_nd_infer};
  return d;
}

}  // namespace ucudnn
