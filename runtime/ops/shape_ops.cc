// Descriptors of the shape-only and conversion ops: Flatten, Reshape, Squeeze,
// Unsqueeze, Shape, Size, Identity, Dropout, Constant, Cast.
//
// Newest-opset forms only (the importer upgrades older ones): Squeeze and
// Unsqueeze take `axes` as an input, Dropout takes ratio/training_mode inputs.
// Shape-like inputs (Reshape's shape, Squeeze/Unsqueeze axes) must be constants
// at import. Everything except Dropout and Cast's math is a copy of bytes, so
// any dtype works (exporters run these on int64 shape tensors).
// Gradient rules: Flatten, Reshape, Squeeze and Unsqueeze reshape the output's
// gradient back to the input's shape; Identity passes it through.
#include <algorithm>
#include <set>

#include "runtime/core/bytes.h"
#include "runtime/ops/gradient.h"
#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {

bool is_cast_dtype(DType d) {
  switch (d) {
    case DType::kFloat32: case DType::kFloat64: case DType::kInt32: case DType::kInt64:
    case DType::kInt8: case DType::kUInt8: case DType::kBool: case DType::kFloat16: case DType::kBFloat16:
      return true;
    default: return false;
  }
}

Status flatten_infer(InferContext& ctx) {
  if (!ctx.has_input(0)) return ctx.error("input 0 is required");
  const Shape& in = ctx.input(0).shape;
  const int64_t rank = static_cast<int64_t>(in.size());
  int64_t axis = ctx.attrs().get_int("axis");
  if (axis < -rank || axis > rank)
    return ctx.error("axis " + std::to_string(axis) + " is out of range [" + std::to_string(-rank) + ", " +
                     std::to_string(rank) + "]");
  if (axis < 0) axis += rank;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d) (d < axis ? outer : inner) *= in[d];
  ctx.set_output(0, ctx.input(0).dtype, {outer, inner});
  return Status::ok();
}

Status reshape_infer(InferContext& ctx) {
  if (!ctx.has_input(0)) return ctx.error("input 0 is required");
  UCUDNN_RETURN_IF_ERROR(ctx.expect_constant(1, "shape"));
  auto target = ctx.input(1).constant->to_int64_vector();
  if (!target) return ctx.error("shape: " + target.status().message());
  if (ctx.input(1).shape.size() != 1) return ctx.error("shape must be 1-D, got " + shape_to_string(ctx.input(1).shape));
  const Shape& in = ctx.input(0).shape;
  const bool allow_zero = ctx.attrs().get_int("allowzero") != 0;
  Shape out = *target;
  int64_t infer_at = -1, known = 1;
  bool has_zero = false;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      if (infer_at >= 0) return ctx.error("shape " + shape_to_string(*target) + " has more than one -1");
      infer_at = static_cast<int64_t>(i);
      continue;
    }
    if (out[i] < -1) return ctx.error("shape " + shape_to_string(*target) + " has a negative dimension");
    if (out[i] == 0) {
      has_zero = true;
      if (!allow_zero) {
        if (i >= in.size())
          return ctx.error("shape " + shape_to_string(*target) + " copies dimension " + std::to_string(i) +
                           " (0) that the input does not have");
        out[i] = in[i];
      }
    }
    if (!checked_mul(known, out[i], &known))  // then it cannot equal the input's count, which fits
      return ctx.error("cannot reshape " + shape_to_string(in) + " into " + shape_to_string(*target) +
                       ": the target shape has more elements than fit in 64 bits");
  }
  if (allow_zero && has_zero && infer_at >= 0)
    return ctx.error("with allowzero=1 the shape cannot contain both 0 and -1: " + shape_to_string(*target));
  const int64_t numel = shape_numel(in);
  if (infer_at >= 0) {
    if (known == 0 || numel % known != 0)
      return ctx.error("cannot reshape " + shape_to_string(in) + " into " + shape_to_string(*target) +
                       ": the -1 dimension cannot be inferred");
    out[infer_at] = numel / known;
  } else if (known != numel) {
    return ctx.error("cannot reshape " + shape_to_string(in) + " (" + std::to_string(numel) + " elements) into " +
                     shape_to_string(out) + " (" + std::to_string(known) + " elements)");
  }
  ctx.set_output(0, ctx.input(0).dtype, std::move(out));
  return Status::ok();
}

// Reads a constant axes input and normalises it against `rank`; rejects duplicates.
Expected<std::vector<int64_t>> read_axes(const InferContext& ctx, size_t input, int64_t rank) {
  auto axes = ctx.input(input).constant->to_int64_vector();
  if (!axes) return ctx.error("axes: " + axes.status().message());
  std::set<int64_t> seen;
  for (int64_t& a : *axes) {
    const int64_t n = normalize_axis(a, rank);
    if (n < 0)
      return ctx.error("axis " + std::to_string(a) + " is out of range for rank " + std::to_string(rank));
    if (!seen.insert(n).second) return ctx.error("axis " + std::to_string(a) + " is repeated");
    a = n;
  }
  return std::move(axes).value();
}

Status squeeze_infer(InferContext& ctx) {
  if (!ctx.has_input(0)) return ctx.error("input 0 is required");
  const Shape& in = ctx.input(0).shape;
  const int64_t rank = static_cast<int64_t>(in.size());
  std::vector<bool> drop(in.size(), false);
  if (ctx.has_input(1)) {
    UCUDNN_RETURN_IF_ERROR(ctx.expect_constant(1, "axes"));
    UCUDNN_ASSIGN_OR_RETURN(std::vector<int64_t> axes, read_axes(ctx, 1, rank));
    for (int64_t a : axes) {
      if (in[a] != 1)
        return ctx.error("cannot squeeze axis " + std::to_string(a) + " of size " + std::to_string(in[a]));
      drop[a] = true;
    }
  } else {
    for (size_t d = 0; d < in.size(); ++d) drop[d] = in[d] == 1;
  }
  Shape out;
  for (size_t d = 0; d < in.size(); ++d)
    if (!drop[d]) out.push_back(in[d]);
  ctx.set_output(0, ctx.input(0).dtype, std::move(out));
  return Status::ok();
}

Status unsqueeze_infer(InferContext& ctx) {
  if (!ctx.has_input(0)) return ctx.error("input 0 is required");
  UCUDNN_RETURN_IF_ERROR(ctx.expect_constant(1, "axes"));
  const Shape& in = ctx.input(0).shape;
  const int64_t out_rank = static_cast<int64_t>(in.size() + shape_numel(ctx.input(1).shape));
  UCUDNN_ASSIGN_OR_RETURN(std::vector<int64_t> axes, read_axes(ctx, 1, out_rank));
  Shape out(static_cast<size_t>(out_rank), 0);
  for (int64_t a : axes) out[a] = 1;
  size_t next = 0;
  std::vector<bool> inserted(out.size(), false);
  for (int64_t a : axes) inserted[a] = true;
  for (size_t d = 0; d < out.size(); ++d)
    if (!inserted[d]) out[d] = in[next++];
  ctx.set_output(0, ctx.input(0).dtype, std::move(out));
  return Status::ok();
}

Status shape_infer(InferContext& ctx) {
  if (!ctx.has_input(0)) return ctx.error("input 0 is required");
  const int64_t rank = static_cast<int64_t>(ctx.input(0).shape.size());
  auto clamp_dim = [rank](int64_t v) { return std::clamp(v < 0 ? v + rank : v, int64_t{0}, rank); };
  const int64_t start = clamp_dim(ctx.attrs().get_int("start"));
  const int64_t end = ctx.attrs().has("end") ? clamp_dim(ctx.attrs().get_int("end")) : rank;
  ctx.set_output(0, DType::kInt64, {std::max<int64_t>(0, end - start)});
  return Status::ok();
}

// Size: X's element count as an int64 scalar (folded at import, as Shape is).
Status size_infer(InferContext& ctx) {
  if (!ctx.has_input(0)) return ctx.error("input 0 is required");
  ctx.set_output(0, DType::kInt64, {});
  return Status::ok();
}

Status identity_infer(InferContext& ctx) {
  if (!ctx.has_input(0)) return ctx.error("input 0 is required");
  ctx.set_output(0, ctx.input(0).dtype, ctx.input(0).shape);
  return Status::ok();
}

// Whether Dropout's ratio is a constant 0: then training mode drops nothing and scales by 1 / (1 - 0), an
// identity as inference is (PyTorch exports attention dropout so, e.g. torchvision's Swin Transformer).
bool zero_ratio(const InferContext& ctx) {
  const Tensor* ratio = ctx.has_input(1) ? ctx.input(1).constant : nullptr;
  if (ratio == nullptr || ratio->numel() != 1) return false;
  if (ratio->dtype() == DType::kFloat32) return ratio->data<float>()[0] == 0.0f;
  return ratio->dtype() == DType::kFloat64 && ratio->data<double>()[0] == 0.0;
}

Status dropout_infer(InferContext& ctx) {
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(0, {DType::kFloat32, DType::kFloat64}));
  if (ctx.has_input(2)) {
    if (ctx.input(2).constant == nullptr)
      return ctx.unsupported_error("training_mode must be known when the model is loaded (inference only)");
    auto mode = ctx.input(2).constant->to_int64_vector();
    if (!mode || mode->size() != 1) return ctx.error("training_mode must be a bool scalar");
    if ((*mode)[0] != 0 && !zero_ratio(ctx))
      return ctx.unsupported_error("training_mode=true with a ratio other than a constant 0 is not supported "
                                   "(inference only)");
  }
  ctx.set_output(0, ctx.input(0).dtype, ctx.input(0).shape);
  if (ctx.num_outputs() > 1) ctx.set_output(1, DType::kBool, ctx.input(0).shape);
  return Status::ok();
}

Status constant_infer(InferContext& ctx) {
  const Tensor& value = ctx.attrs().get_tensor("value");
  if (value.dtype() == DType::kUndefined || (value.numel() != 0 && value.raw() == nullptr))
    return ctx.error("value attribute holds no data");
  ctx.set_output(0, value.dtype(), value.shape());
  ctx.output(0).constant = &value;  // lives in the node's attributes
  return Status::ok();
}

Status cast_infer(InferContext& ctx) {
  if (!ctx.has_input(0)) return ctx.error("input 0 is required");
  const int64_t to = ctx.attrs().get_int("to");
  const DType target = dtype_from_onnx(static_cast<int>(to));
  if (!is_cast_dtype(target))
    return ctx.unsupported_error("Cast to " + onnx_dtype_name(static_cast<int>(to)) +
                                 " is not supported (float32, float64, float16, bfloat16, int32, int64, int8, uint8, bool are)");
  if (!is_cast_dtype(ctx.input(0).dtype))
    return ctx.unsupported_error(std::string("Cast from ") + dtype_name(ctx.input(0).dtype) + " is not supported");
  ctx.set_output(0, target, ctx.input(0).shape);
  return Status::ok();
}

// dX = dY viewed with X's shape (the op only relabels the dims of the same elements).
Status reshape_gradient(GradientContext& ctx) {
  const ir::ValueId dy = ctx.output_grad(0);
  if (dy == ir::kNoValue || !ctx.needs_input_grad(0)) return Status::ok();
  UCUDNN_ASSIGN_OR_RETURN(ir::ValueId dx, ctx.reshape(dy, ctx.value(ctx.input(0)).shape));
  return ctx.add_input_grad(0, dx);
}

}  // namespace

const OpDescriptor& describe_Flatten() {
  static const OpDescriptor d{
      .kind = OpKind::kFlatten, .min_opset = 1, .attrs = {attr_int("axis", 1)}, .infer = flatten_infer,
      .gradient = reshape_gradient};
  return d;
}

const OpDescriptor& describe_Reshape() {
  static const OpDescriptor d{.kind = OpKind::kReshape,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .min_opset = 1,  // Reshape-1's shape attribute: onnx_import/upgrade.cc
                              .attrs = {attr_int("allowzero", 0)},
                              .infer = reshape_infer,
                              .gradient = reshape_gradient};
  return d;
}

const OpDescriptor& describe_Squeeze() {
  static const OpDescriptor d{
      .kind = OpKind::kSqueeze, .min_inputs = 1, .max_inputs = 2, .min_opset = 1, .infer = squeeze_infer,
      .gradient = reshape_gradient};
  return d;
}

const OpDescriptor& describe_Unsqueeze() {
  static const OpDescriptor d{
      .kind = OpKind::kUnsqueeze, .min_inputs = 2, .max_inputs = 2, .min_opset = 1, .infer = unsqueeze_infer,
      .gradient = reshape_gradient};
  return d;
}

const OpDescriptor& describe_Shape() {
  static const OpDescriptor d{.kind = OpKind::kShape,
                              .min_opset = 1,
                              .attrs = {attr_int("start", 0), attr_optional("end", ir::AttrType::kInt)},
                              .infer = shape_infer};
  return d;
}

const OpDescriptor& describe_Size() {
  static const OpDescriptor d{.kind = OpKind::kSize, .min_opset = 1, .infer = size_infer};
  return d;
}

const OpDescriptor& describe_Identity() {
  static const OpDescriptor d{
      .kind = OpKind::kIdentity, .min_opset = 1, .infer = identity_infer, .gradient = reshape_gradient};
  return d;
}

const OpDescriptor& describe_Dropout() {
  static const OpDescriptor d{.kind = OpKind::kDropout,
                              .min_inputs = 1,
                              .max_inputs = 3,
                              .min_outputs = 1,
                              .max_outputs = 2,
                              .min_opset = 6,  // Dropout-6 is_test/ratio attributes: upgrade.cc
                              .attrs = {attr_optional("seed", ir::AttrType::kInt)},
                              .infer = dropout_infer};
  return d;
}

const OpDescriptor& describe_Constant() {
  static const OpDescriptor d{.kind = OpKind::kConstant,
                              .min_inputs = 0,
                              .max_inputs = 0,
                              .min_opset = 1,
                              .attrs = {attr_required("value", ir::AttrType::kTensor)},
                              .infer = constant_infer};
  return d;
}

const OpDescriptor& describe_Cast() {
  static const OpDescriptor d{.kind = OpKind::kCast,
                              .min_opset = 1,  // Cast-1's type names: onnx_import/upgrade.cc
                              .attrs = {attr_required("to", ir::AttrType::kInt), attr_int("saturate", 1)},
                              .infer = cast_infer};
  return d;
}

}  // namespace ucudnn
