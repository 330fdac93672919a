// Range and EyeLike (generators.h): the values, the descriptors.
#include "runtime/ops/generators.h"

#include <cmath>
#include <string>

#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {

// The most elements a Range may have (2^31: a larger one is a mistake in the model, not a tensor to build).
constexpr int64_t kMaxRangeElements = int64_t{1} << 31;

double scalar(const Tensor& t) {
  switch (t.dtype()) {
    case DType::kFloat32: return t.data<float>()[0];
    case DType::kInt32: return t.data<int32_t>()[0];
    default: return static_cast<double>(t.data<int64_t>()[0]);
  }
}

// An int32 or int64 scalar in long double: exact (a 64-bit significand on x86-64), and the difference of
// two cannot overflow there.
long double integer(const Tensor& t) {
  return t.dtype() == DType::kInt32 ? static_cast<long double>(t.data<int32_t>()[0])
                                    : static_cast<long double>(t.data<int64_t>()[0]);
}

}  // namespace

Expected<int64_t> range_count(const Tensor& start, const Tensor& limit, const Tensor& delta, const std::string& where) {
  for (const Tensor* t : {&start, &limit, &delta})
    if (t->numel() != 1 || t->dtype() != start.dtype() ||
        (t->dtype() != DType::kFloat32 && t->dtype() != DType::kInt32 && t->dtype() != DType::kInt64))
      return invalid_argument(where + ": start, limit and delta must be scalars of one dtype (float32, int32 or "
                              "int64), got " + start.describe() + ", " + limit.describe() + ", " + delta.describe());
  double count = 0;
  if (start.dtype() == DType::kFloat32) {
    const double d = scalar(delta);
    if (d == 0 || !std::isfinite(d) || !std::isfinite(scalar(start)) || !std::isfinite(scalar(limit)))
      return invalid_argument(where + ": Range needs a finite, non-zero delta and finite bounds, got start " +
                              std::to_string(scalar(start)) + ", limit " + std::to_string(scalar(limit)) +
                              ", delta " + std::to_string(d));
    // The difference in float32, the division in double: as ONNX Runtime counts.
    const float difference = limit.data<float>()[0] - start.data<float>()[0];
    count = std::ceil(static_cast<double>(difference) / d);
  } else {
    const long double d = integer(delta);
    if (d == 0) return invalid_argument(where + ": Range's delta is 0");
    count = static_cast<double>(std::ceil((integer(limit) - integer(start)) / d));
  }
  if (count <= 0) return int64_t{0};
  if (count > static_cast<double>(kMaxRangeElements))
    return invalid_argument(where + ": Range of " + std::to_string(count) + " elements (at most 2^31)");
  return static_cast<int64_t>(count);
}

Expected<Tensor> range_values(const Tensor& start, const Tensor& limit, const Tensor& delta, const std::string& where) {
  UCUDNN_ASSIGN_OR_RETURN(const int64_t n, range_count(start, limit, delta, where));
  UCUDNN_ASSIGN_OR_RETURN(Tensor out, Tensor::allocate(start.dtype(), {n}));
  switch (start.dtype()) {
    case DType::kFloat32: {
      const float s = start.data<float>()[0], d = delta.data<float>()[0];
      for (int64_t i = 0; i < n; ++i) out.data<float>()[i] = s + static_cast<float>(i) * d;
      break;
    }
    case DType::kInt32: {  // in int64: no overflow for the at most 2^31 steps of an int32 delta within int32 bounds
      const int64_t s = start.data<int32_t>()[0], d = delta.data<int32_t>()[0];
      for (int64_t i = 0; i < n; ++i) out.data<int32_t>()[i] = static_cast<int32_t>(s + i * d);
      break;
    }
    default: {  // the values lie between start and limit, so start + i · delta stays in int64
      const int64_t s = start.data<int64_t>()[0], d = delta.data<int64_t>()[0];
      for (int64_t i = 0; i < n; ++i) out.data<int64_t>()[i] = s + i * d;
      break;
    }
  }
  return out;
}

Expected<Tensor> eye_like_values(const Shape& shape, DType dtype, int64_t k) {
  if (shape.size() != 2) return invalid_argument("EyeLike's input must be 2-D, got " + shape_to_string(shape));
  UCUDNN_ASSIGN_OR_RETURN(Tensor out, Tensor::allocate(dtype, shape));  // zeros
  for (int64_t r = 0; r < shape[0]; ++r) {
    const int64_t c = r + k;
    if (c < 0 || c >= shape[1]) continue;
    const int64_t i = r * shape[1] + c;
    switch (dtype) {
#define UCUDNN_DTYPE_ONE(name, type, code) \
  case DType::k##name: out.data<type>()[i] = type(1); break;
      UCUDNN_FOR_EACH_DTYPE(UCUDNN_DTYPE_ONE)
#undef UCUDNN_DTYPE_ONE
      default: return unsupported(std::string("EyeLike to ") + dtype_name(dtype));
    }
  }
  return out;
}

namespace {

Status range_infer(InferContext& ctx) {
  for (size_t i = 0; i < 3; ++i) {
    UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(i, {DType::kFloat32, DType::kInt32, DType::kInt64}));
    UCUDNN_RETURN_IF_ERROR(ctx.expect_constant(i, i == 0 ? "start" : i == 1 ? "limit" : "delta"));
  }
  const Expected<int64_t> n =
      range_count(*ctx.input(0).constant, *ctx.input(1).constant, *ctx.input(2).constant, "Range");
  if (!n) return ctx.error(n.status().message());
  ctx.set_output(0, ctx.input(0).dtype, {*n});
  return Status::ok();
}

Status eye_like_infer(InferContext& ctx) {
  if (ctx.input(0).shape.size() != 2)
    return ctx.error("input must be 2-D, got shape " + shape_to_string(ctx.input(0).shape));
  DType dtype = ctx.input(0).dtype;
  if (ctx.attrs().has("dtype")) dtype = dtype_from_onnx(static_cast<int>(ctx.attrs().get_int("dtype")));
  if (dtype == DType::kUndefined)
    return ctx.unsupported_error("EyeLike of dtype " + onnx_dtype_name(static_cast<int>(ctx.attrs().get_int("dtype"))));
  ctx.set_output(0, dtype, ctx.input(0).shape);
  return Status::ok();
}

}  // namespace

const OpDescriptor& describe_Range() {
  static const OpDescriptor d{.kind = OpKind::kRange, .min_inputs = 3, .max_inputs = 3, .min_opset = 11,
                              .infer = range_infer};
  return d;
}

const OpDescriptor& describe_EyeLike() {
  static const OpDescriptor d{.kind = OpKind::kEyeLike,
                              .min_opset = 9,
                              .attrs = {attr_optional("dtype", ir::AttrType::kInt), attr_int("k", 0)},
                              .infer = eye_like_infer};
  return d;
}

}  // namespace ucudnn
