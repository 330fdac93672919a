// Descriptors of the data-movement ops: Concat, Split, Slice, Transpose, Pad,
// Gather, Expand — plus resolve_slice/resolve_pads (data_movement.h), which the CPU
// kernels reuse. All of them move elements by size, so any dtype works.
// Gradient rules: Concat → Slice per input; Split → Concat of the outputs'
// gradients (zeros for an output without one); Slice (steps 1) → Pad with zeros;
// Pad (constant) → Pad by the negated pads (a crop, or a pad where the forward
// cropped); Transpose → the inverse Transpose; Expand → reduce_to_shape.
//
// Newest-opset forms only (the importer upgrades older ones): Slice and Pad take
// their parameters as inputs, Split takes `split` as an input or `num_outputs`
// (opset 18). Those parameter inputs must be constants at import. Pad supports
// modes "constant", "reflect" and "edge", any dtype; reflect and edge without negative pads (crops),
// and reflect's pads below the axis's size (as ONNX Runtime requires); "wrap" is reported as
// Unsupported. Only constant Pads are differentiated.
#include "runtime/ops/data_movement.h"

#include <algorithm>
#include <set>

#include "runtime/core/bytes.h"
#include "runtime/ops/gradient.h"
#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {

std::string ints_to_string(const std::vector<int64_t>& v) { return shape_to_string(v); }

}  // namespace

Expected<SliceParams> resolve_slice(const Shape& in, const std::vector<int64_t>& starts,
                                    const std::vector<int64_t>& ends, const std::vector<int64_t>& axes,
                                    const std::vector<int64_t>& steps) {
  const int64_t rank = static_cast<int64_t>(in.size());
  if (starts.size() != ends.size())
    return invalid_model("starts " + ints_to_string(starts) + " and ends " + ints_to_string(ends) +
                         " differ in length");
  if (!axes.empty() && axes.size() != starts.size())
    return invalid_model("axes " + ints_to_string(axes) + " and starts " + ints_to_string(starts) +
                         " differ in length");
  if (!steps.empty() && steps.size() != starts.size())
    return invalid_model("steps " + ints_to_string(steps) + " and starts " + ints_to_string(starts) +
                         " differ in length");
  SliceParams p;
  p.out_shape = in;
  p.start.assign(in.size(), 0);
  p.step.assign(in.size(), 1);
  std::vector<bool> seen(in.size(), false);
  for (size_t i = 0; i < starts.size(); ++i) {
    const int64_t raw_axis = axes.empty() ? static_cast<int64_t>(i) : axes[i];
    const int64_t axis = normalize_axis(raw_axis, rank);
    if (axis < 0)
      return invalid_model("axis " + std::to_string(raw_axis) + " is out of range for rank " + std::to_string(rank));
    if (seen[axis]) return invalid_model("axis " + std::to_string(raw_axis) + " is repeated");
    seen[axis] = true;
    const int64_t step = steps.empty() ? 1 : steps[i];
    if (step == 0) return invalid_model("step 0 on axis " + std::to_string(raw_axis));
    const int64_t dim = in[axis];
    int64_t start = starts[i] < 0 ? starts[i] + dim : starts[i];
    int64_t end = ends[i] < 0 ? ends[i] + dim : ends[i];
    int64_t len;
    if (dim == 0) {
      len = 0;  // nothing to clamp into (and std::clamp needs lo <= hi)
    } else if (step > 0) {
      // ceil(span / step) as 1 + (span - 1) / step: no overflow for any step.
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
      len = end > start ? 1 + (end - start - 1) / step : 0;
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
      const int64_t magnitude = step == INT64_MIN ? INT64_MAX : -step;  // -INT64_MIN overflows; spans are smaller
      len = start > end ? 1 + (start - end - 1) / magnitude : 0;
    }
    p.out_shape[axis] = len;
    p.start[axis] = len > 0 ? start : 0;
    p.step[axis] = step;
  }
  return p;
}

Expected<PadParams> resolve_pads(const Shape& in, const std::vector<int64_t>& pads,
                                 const std::vector<int64_t>& axes) {
  const int64_t rank = static_cast<int64_t>(in.size());
  const size_t n = axes.empty() ? in.size() : axes.size();
  if (pads.size() != 2 * n)
    return invalid_model("pads " + ints_to_string(pads) + " must hold " + std::to_string(2 * n) +
                         " values (begin and end for each of " + std::to_string(n) + " axes)");
  PadParams p;
  p.out_shape = in;
  p.begin.assign(in.size(), 0);
  p.end.assign(in.size(), 0);
  std::vector<bool> seen(in.size(), false);
  for (size_t i = 0; i < n; ++i) {
    const int64_t raw_axis = axes.empty() ? static_cast<int64_t>(i) : axes[i];
    const int64_t axis = normalize_axis(raw_axis, rank);
    if (axis < 0)
      return invalid_model("axis " + std::to_string(raw_axis) + " is out of range for rank " + std::to_string(rank));
    if (seen[axis]) return invalid_model("axis " + std::to_string(raw_axis) + " is repeated");
    seen[axis] = true;
    p.begin[axis] = pads[i];
    p.end[axis] = pads[i + n];
    int64_t padded = 0;
    if (!checked_add(in[axis], pads[i], &padded) || !checked_add(padded, pads[i + n], &padded))
      return invalid_model("pads " + ints_to_string(pads) + " on axis " + std::to_string(axis) + " of size " +
                           std::to_string(in[axis]) + " give a size that does not fit in 64 bits");
    p.out_shape[axis] = padded;
    if (p.out_shape[axis] < 0)
      return invalid_model("pads " + ints_to_string(pads) + " crop axis " + std::to_string(axis) + " of size " +
                           std::to_string(in[axis]) + " below zero");
  }
  return p;
}

namespace {

// Reads constant input i as int64s; an absent input gives an empty vector.
Expected<std::vector<int64_t>> constant_ints(const InferContext& ctx, size_t i, const char* what) {
  if (!ctx.has_input(i)) return std::vector<int64_t>{};
  UCUDNN_RETURN_IF_ERROR(ctx.expect_constant(i, what));
  if (ctx.input(i).shape.size() > 1)
    return ctx.error(std::string(what) + " must be 1-D, got shape " + shape_to_string(ctx.input(i).shape));
  auto v = ctx.input(i).constant->to_int64_vector();
  if (!v) return ctx.error(std::string(what) + ": " + v.status().message());
  return std::move(v).value();
}

Status concat_infer(InferContext& ctx) {
  if (!ctx.has_input(0)) return ctx.error("input 0 is required");
  const DType dtype = ctx.input(0).dtype;
  Shape out = ctx.input(0).shape;
  const int64_t rank = static_cast<int64_t>(out.size());
  const int64_t axis = normalize_axis(ctx.attrs().get_int("axis"), rank);
  if (axis < 0)
    return ctx.error("axis " + std::to_string(ctx.attrs().get_int("axis")) + " is out of range for rank " +
                     std::to_string(rank));
  out[axis] = 0;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) return ctx.error("input " + std::to_string(i) + " is missing");
    const ValueInfo& v = ctx.input(i);
    if (v.dtype != dtype)
      return ctx.error("input " + std::to_string(i) + " has dtype " + dtype_name(v.dtype) + ", input 0 has " +
                       dtype_name(dtype));
    if (static_cast<int64_t>(v.shape.size()) != rank)
      return ctx.error("input " + std::to_string(i) + " has rank " + std::to_string(v.shape.size()) +
                       ", input 0 has rank " + std::to_string(rank));
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis && v.shape[d] != ctx.input(0).shape[d])
        return ctx.error("input " + std::to_string(i) + " differs from input 0 in dimension " + std::to_string(d) +
                         " (not the concat axis " + std::to_string(axis) + ")");
    if (!checked_add(out[axis], v.shape[axis], &out[axis]))
      return ctx.error("the concatenated size along axis " + std::to_string(axis) + " does not fit in 64 bits");
  }
  ctx.set_output(0, dtype, std::move(out));
  return Status::ok();
}

Status split_infer(InferContext& ctx) {
  if (!ctx.has_input(0)) return ctx.error("input 0 is required");
  const Shape& in = ctx.input(0).shape;
  const int64_t rank = static_cast<int64_t>(in.size());
  const int64_t axis = normalize_axis(ctx.attrs().get_int("axis"), rank);
  if (axis < 0)
    return ctx.error("axis " + std::to_string(ctx.attrs().get_int("axis")) + " is out of range for rank " +
                     std::to_string(rank));
  const int64_t n = static_cast<int64_t>(ctx.num_outputs());
  const int64_t dim = in[axis];
  std::vector<int64_t> sizes;
  if (ctx.has_input(1)) {
    if (ctx.attrs().has("num_outputs")) return ctx.error("split input and num_outputs attribute are both set");
    UCUDNN_ASSIGN_OR_RETURN(sizes, constant_ints(ctx, 1, "split"));
    if (static_cast<int64_t>(sizes.size()) != n)
      return ctx.error("split " + ints_to_string(sizes) + " has " + std::to_string(sizes.size()) +
                       " entries for " + std::to_string(n) + " outputs");
    int64_t sum = 0;
    for (int64_t s : sizes) {
      if (s < 0) return ctx.error("split " + ints_to_string(sizes) + " has a negative size");
      if (!checked_add(sum, s, &sum)) return ctx.error("split " + ints_to_string(sizes) + " sums past 64 bits");
    }
    if (sum != dim)
      return ctx.error("split " + ints_to_string(sizes) + " sums to " + std::to_string(sum) + ", axis " +
                       std::to_string(axis) + " has size " + std::to_string(dim));
  } else if (ctx.attrs().has("num_outputs")) {
    if (ctx.attrs().get_int("num_outputs") != n)
      return ctx.error("num_outputs is " + std::to_string(ctx.attrs().get_int("num_outputs")) + " but the node has " +
                       std::to_string(n) + " outputs");
    // Opset 18: chunks of ceil(dim / n); the last one is smaller when uneven.
    const int64_t chunk = dim == 0 ? 0 : 1 + (dim - 1) / n;  // ceil(dim / n) without overflow
    if (chunk * (n - 1) > dim)
      return ctx.error("cannot split size " + std::to_string(dim) + " into " + std::to_string(n) + " chunks of " +
                       std::to_string(chunk));
    sizes.assign(n, chunk);
    sizes.back() = dim - chunk * (n - 1);
  } else {
    if (dim % n != 0)
      return ctx.error("axis " + std::to_string(axis) + " of size " + std::to_string(dim) +
                       " does not split evenly into " + std::to_string(n) + " outputs");
    sizes.assign(n, dim / n);
  }
  for (int64_t i = 0; i < n; ++i) {
    Shape s = in;
    s[axis] = sizes[i];
    ctx.set_output(i, ctx.input(0).dtype, std::move(s));
  }
  return Status::ok();
}

Status slice_infer(InferContext& ctx) {
  if (!ctx.has_input(0)) return ctx.error("input 0 is required");
  UCUDNN_RETURN_IF_ERROR(ctx.expect_constant(1, "starts"));
  UCUDNN_RETURN_IF_ERROR(ctx.expect_constant(2, "ends"));
  UCUDNN_ASSIGN_OR_RETURN(auto starts, constant_ints(ctx, 1, "starts"));
  UCUDNN_ASSIGN_OR_RETURN(auto ends, constant_ints(ctx, 2, "ends"));
  UCUDNN_ASSIGN_OR_RETURN(auto axes, constant_ints(ctx, 3, "axes"));
  UCUDNN_ASSIGN_OR_RETURN(auto steps, constant_ints(ctx, 4, "steps"));
  auto p = resolve_slice(ctx.input(0).shape, starts, ends, axes, steps);
  if (!p) return ctx.error(p.status().message());
  ctx.set_output(0, ctx.input(0).dtype, p->out_shape);
  return Status::ok();
}

Status transpose_infer(InferContext& ctx) {
  if (!ctx.has_input(0)) return ctx.error("input 0 is required");
  const Shape& in = ctx.input(0).shape;
  const size_t rank = in.size();
  Shape out(rank);
  if (ctx.attrs().has("perm")) {
    const std::vector<int64_t>& perm = ctx.attrs().get_ints("perm");
    if (perm.size() != rank)
      return ctx.error("perm " + ints_to_string(perm) + " does not have rank " + std::to_string(rank) + " entries");
    std::vector<bool> seen(rank, false);
    for (size_t i = 0; i < rank; ++i) {
      if (perm[i] < 0 || perm[i] >= static_cast<int64_t>(rank) || seen[perm[i]])
        return ctx.error("perm " + ints_to_string(perm) + " is not a permutation of 0.." + std::to_string(rank - 1));
      seen[perm[i]] = true;
      out[i] = in[perm[i]];
    }
  } else {
    std::reverse_copy(in.begin(), in.end(), out.begin());
  }
  ctx.set_output(0, ctx.input(0).dtype, std::move(out));
  return Status::ok();
}

Status pad_infer(InferContext& ctx) {
  if (!ctx.has_input(0)) return ctx.error("input 0 is required");
  const std::string& mode = ctx.attrs().get_string("mode");
  if (mode == "wrap") return ctx.unsupported_error("mode 'wrap' is not supported; constant, reflect and edge are");
  if (mode != "constant" && mode != "reflect" && mode != "edge")
    return ctx.error("unknown mode '" + mode + "' (ONNX allows constant, reflect, edge, wrap)");
  UCUDNN_RETURN_IF_ERROR(ctx.expect_constant(1, "pads"));
  UCUDNN_ASSIGN_OR_RETURN(auto pads, constant_ints(ctx, 1, "pads"));
  UCUDNN_ASSIGN_OR_RETURN(auto axes, constant_ints(ctx, 3, "axes"));
  if (ctx.has_input(2)) {
    if (ctx.input(2).dtype != ctx.input(0).dtype)
      return ctx.error(std::string("constant_value has dtype ") + dtype_name(ctx.input(2).dtype) + ", data has " +
                       dtype_name(ctx.input(0).dtype));
    if (shape_numel(ctx.input(2).shape) != 1)
      return ctx.error("constant_value must be a scalar, got shape " + shape_to_string(ctx.input(2).shape));
  }
  auto p = resolve_pads(ctx.input(0).shape, pads, axes);
  if (!p) return ctx.error(p.status().message());
  if (mode != "constant")
    for (size_t d = 0; d < p->out_shape.size(); ++d) {
      const int64_t size = ctx.input(0).shape[d];
      if (size == 0 && p->out_shape[d] > 0)
        return ctx.error("mode '" + mode + "' pads axis " + std::to_string(d) + ", which is empty: nothing to repeat");
      if (p->begin[d] < 0 || p->end[d] < 0)
        return ctx.unsupported_error("mode '" + mode + "' with a negative pad (a crop) on axis " + std::to_string(d));
      if (mode == "reflect" && (p->begin[d] >= size || p->end[d] >= size) && p->out_shape[d] != size)
        return ctx.unsupported_error("mode 'reflect' pads axis " + std::to_string(d) + " of size " +
                                     std::to_string(size) + " by " + std::to_string(p->begin[d]) + " and " +
                                     std::to_string(p->end[d]) + "; each must be below the size");
    }
  ctx.set_output(0, ctx.input(0).dtype, p->out_shape);
  return Status::ok();
}

Status gather_infer(InferContext& ctx) {
  if (!ctx.has_input(0)) return ctx.error("input 0 is required");
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(1, {DType::kInt64, DType::kInt32}));
  const Shape& data = ctx.input(0).shape;
  const int64_t rank = static_cast<int64_t>(data.size());
  const int64_t axis = normalize_axis(ctx.attrs().get_int("axis"), rank);
  if (axis < 0)
    return ctx.error("axis " + std::to_string(ctx.attrs().get_int("axis")) + " is out of range for rank " +
                     std::to_string(rank));
  if (ctx.input(1).constant != nullptr) {
    auto indices = ctx.input(1).constant->to_int64_vector();
    if (!indices) return ctx.error("indices: " + indices.status().message());
    for (int64_t i : *indices)
      if (i < -data[axis] || i >= data[axis])
        return ctx.error("index " + std::to_string(i) + " is out of range for axis " + std::to_string(axis) +
                         " of size " + std::to_string(data[axis]));
  }
  Shape out(data.begin(), data.begin() + axis);
  out.insert(out.end(), ctx.input(1).shape.begin(), ctx.input(1).shape.end());
  out.insert(out.end(), data.begin() + axis + 1, data.end());
  ctx.set_output(0, ctx.input(0).dtype, std::move(out));
  return Status::ok();
}

Status expand_infer(InferContext& ctx) {
  if (!ctx.has_input(0)) return ctx.error("input 0 is required");
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(1, {DType::kInt64}));
  UCUDNN_RETURN_IF_ERROR(ctx.expect_constant(1, "shape"));
  UCUDNN_ASSIGN_OR_RETURN(auto shape, constant_ints(ctx, 1, "shape"));
  for (int64_t d : shape)
    if (d < 0) return ctx.error("shape " + ints_to_string(shape) + " has a negative dimension");
  Shape out;
  if (!broadcast_shapes(ctx.input(0).shape, shape, &out))
    return ctx.error("input " + shape_to_string(ctx.input(0).shape) + " does not broadcast with shape " +
                     ints_to_string(shape));
  ctx.set_output(0, ctx.input(0).dtype, std::move(out));
  return Status::ok();
}

constexpr int kManyValues = 1 << 16;

// ---- gradient rules ----------------------------------------------------------------

// The constant int64 vector input i of the forward node (empty when absent).
Expected<std::vector<int64_t>> constant_input(GradientContext& ctx, size_t i, const char* what) {
  if (ctx.input(i) == ir::kNoValue) return std::vector<int64_t>{};
  const std::optional<Tensor>& constant = ctx.value(ctx.input(i)).constant;
  if (!constant) return ctx.unsupported(std::string(what) + " computed at run time");
  return constant->to_int64_vector();
}

ir::Attributes axis_attr(int64_t axis) {
  ir::Attributes attrs;
  attrs.set("axis", axis);
  return attrs;
}

Status concat_gradient(GradientContext& ctx) {
  const ir::ValueId dy = ctx.output_grad(0);
  if (dy == ir::kNoValue) return Status::ok();
  const Shape& out = ctx.value(ctx.output(0)).shape;
  const int64_t axis = normalize_axis(ctx.node().attrs.get_int("axis"), static_cast<int64_t>(out.size()));
  int64_t offset = 0;
  for (size_t i = 0; i < ctx.node().inputs.size(); ++i) {
    const int64_t size = ctx.value(ctx.input(i)).shape[axis];
    if (ctx.needs_input_grad(i)) {
      UCUDNN_ASSIGN_OR_RETURN(ir::ValueId dx, ctx.emit1(OpKind::kSlice, {dy, ctx.int64_constant({offset}, "starts"),
                                                                          ctx.int64_constant({offset + size}, "ends"),
                                                                          ctx.int64_constant({axis}, "axes")}));
      UCUDNN_RETURN_IF_ERROR(ctx.add_input_grad(i, dx));
    }
    offset += size;
  }
  return Status::ok();
}

Status split_gradient(GradientContext& ctx) {
  if (!ctx.needs_input_grad(0)) return Status::ok();
  const int64_t rank = static_cast<int64_t>(ctx.value(ctx.input(0)).shape.size());
  std::vector<ir::ValueId> parts;
  bool any = false;
  for (size_t j = 0; j < ctx.node().outputs.size(); ++j) {
    ir::ValueId grad = ctx.output_grad(j);
    any = any || grad != ir::kNoValue;
    if (grad == ir::kNoValue) {  // zeros: a scalar 0 expanded to the output's shape
      const Shape& shape = ctx.value(ctx.output(j)).shape;
      UCUDNN_ASSIGN_OR_RETURN(grad, ctx.emit1(OpKind::kExpand, {ctx.float_constant(0.0f, "zero"),
                                                                ctx.int64_constant(shape, "shape")}));
    }
    parts.push_back(grad);
  }
  if (!any) return Status::ok();
  const int64_t axis = normalize_axis(ctx.node().attrs.get_int("axis"), rank);
  UCUDNN_ASSIGN_OR_RETURN(ir::ValueId dx, ctx.emit1(OpKind::kConcat, std::move(parts), axis_attr(axis)));
  return ctx.add_input_grad(0, dx);
}

Status slice_gradient(GradientContext& ctx) {
  const ir::ValueId dy = ctx.output_grad(0);
  if (dy == ir::kNoValue || !ctx.needs_input_grad(0)) return Status::ok();
  const Shape& in = ctx.value(ctx.input(0)).shape;
  UCUDNN_ASSIGN_OR_RETURN(auto starts, constant_input(ctx, 1, "starts"));
  UCUDNN_ASSIGN_OR_RETURN(auto ends, constant_input(ctx, 2, "ends"));
  UCUDNN_ASSIGN_OR_RETURN(auto axes, constant_input(ctx, 3, "axes"));
  UCUDNN_ASSIGN_OR_RETURN(auto steps, constant_input(ctx, 4, "steps"));
  for (int64_t step : steps)
    if (step != 1) return ctx.unsupported("steps " + ints_to_string(steps) + ": only step 1 is differentiated");
  auto p = resolve_slice(in, starts, ends, axes, steps);
  if (!p) return ctx.unsupported(p.status().message());
  // dX = dY placed at `start` inside zeros of X's shape: begins start, ends the rest.
  std::vector<int64_t> pads(2 * in.size());
  for (size_t d = 0; d < in.size(); ++d) {
    pads[d] = p->start[d];
    pads[d + in.size()] = in[d] - p->start[d] - p->out_shape[d];
  }
  UCUDNN_ASSIGN_OR_RETURN(ir::ValueId dx, ctx.emit1(OpKind::kPad, {dy, ctx.int64_constant(pads, "pads")}));
  return ctx.add_input_grad(0, dx);
}

Status pad_gradient(GradientContext& ctx) {
  const ir::ValueId dy = ctx.output_grad(0);
  if (dy == ir::kNoValue) return Status::ok();
  if (ctx.needs_input_grad(2)) return ctx.unsupported("the gradient of constant_value is not computed");
  if (!ctx.needs_input_grad(0)) return Status::ok();
  if (ctx.node().attrs.get_string("mode") != "constant")
    return ctx.unsupported("the gradient of a Pad of mode '" + ctx.node().attrs.get_string("mode") + "'");
  UCUDNN_ASSIGN_OR_RETURN(auto pads, constant_input(ctx, 1, "pads"));
  UCUDNN_ASSIGN_OR_RETURN(auto axes, constant_input(ctx, 3, "axes"));
  auto p = resolve_pads(ctx.value(ctx.input(0)).shape, pads, axes);
  if (!p) return ctx.unsupported(p.status().message());
  // The forward put x[i] at y[i + begin]: dX[i] = dY[i + begin], so pad dY by −begin, −end
  // (a crop where the forward padded, zeros where it cropped).
  const size_t rank = p->begin.size();
  std::vector<int64_t> negated(2 * rank);
  for (size_t d = 0; d < rank; ++d) {
    negated[d] = -p->begin[d];
    negated[d + rank] = -p->end[d];
  }
  UCUDNN_ASSIGN_OR_RETURN(ir::ValueId dx, ctx.emit1(OpKind::kPad, {dy, ctx.int64_constant(negated, "pads")}));
  return ctx.add_input_grad(0, dx);
}

Status transpose_gradient(GradientContext& ctx) {
  const ir::ValueId dy = ctx.output_grad(0);
  if (dy == ir::kNoValue || !ctx.needs_input_grad(0)) return Status::ok();
  const size_t rank = ctx.value(ctx.input(0)).shape.size();
  std::vector<int64_t> perm(rank);
  if (ctx.node().attrs.has("perm")) perm = ctx.node().attrs.get_ints("perm");
  else
    for (size_t i = 0; i < rank; ++i) perm[i] = static_cast<int64_t>(rank - 1 - i);
  std::vector<int64_t> inverse(rank);
  for (size_t i = 0; i < rank; ++i) inverse[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  ir::Attributes attrs;
  attrs.set("perm", inverse);
  UCUDNN_ASSIGN_OR_RETURN(ir::ValueId dx, ctx.emit1(OpKind::kTranspose, {dy}, std::move(attrs)));
  return ctx.add_input_grad(0, dx);
}

Status expand_gradient(GradientContext& ctx) {
  const ir::ValueId dy = ctx.output_grad(0);
  if (dy == ir::kNoValue || !ctx.needs_input_grad(0)) return Status::ok();
  UCUDNN_ASSIGN_OR_RETURN(ir::ValueId dx, ctx.reduce_to_shape(dy, ctx.value(ctx.input(0)).shape));
  return ctx.add_input_grad(0, dx);
}

}  // namespace

const OpDescriptor& describe_Concat() {
  static const OpDescriptor d{.kind = OpKind::kConcat,
                              .min_inputs = 1,
                              .max_inputs = kManyValues,
                              .min_opset = 1,  // Concat-1's default axis: onnx_import/upgrade.cc
                              .attrs = {attr_required("axis", ir::AttrType::kInt)},
                              .infer = concat_infer,
                              .gradient = concat_gradient};
  return d;
}

const OpDescriptor& describe_Split() {
  static const OpDescriptor d{.kind = OpKind::kSplit,
                              .min_inputs = 1,
                              .max_inputs = 2,
                              .min_outputs = 1,
                              .max_outputs = kManyValues,
                              .min_opset = 2,
                              .attrs = {attr_int("axis", 0), attr_optional("num_outputs", ir::AttrType::kInt)},
                              .infer = split_infer,
                              .gradient = split_gradient};
  return d;
}

const OpDescriptor& describe_Slice() {
  static const OpDescriptor d{
      .kind = OpKind::kSlice, .min_inputs = 3, .max_inputs = 5, .min_opset = 1, .infer = slice_infer,
      .gradient = slice_gradient};
  return d;
}

const OpDescriptor& describe_Transpose() {
  static const OpDescriptor d{.kind = OpKind::kTranspose,
                              .min_opset = 1,
                              .attrs = {attr_optional("perm", ir::AttrType::kInts)},
                              .infer = transpose_infer,
                              .gradient = transpose_gradient};
  return d;
}

const OpDescriptor& describe_Pad() {
  static const OpDescriptor d{.kind = OpKind::kPad,
                              .min_inputs = 2,
                              .max_inputs = 4,
                              .min_opset = 2,
                              .attrs = {attr_string("mode", "constant")},
                              .infer = pad_infer,
                              .gradient = pad_gradient};
  return d;
}

const OpDescriptor& describe_Gather() {
  static const OpDescriptor d{.kind = OpKind::kGather,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .min_opset = 1,
                              .attrs = {attr_int("axis", 0)},
                              .infer = gather_infer};
  return d;
}

const OpDescriptor& describe_Expand() {
  static const OpDescriptor d{.kind = OpKind::kExpand,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .min_opset = 8,
                              .infer = expand_infer,
                              .gradient = expand_gradient};
  return d;
}

}  // namespace ucudnn
