// Descriptor of MaxUnpool (opsets 9, 11): X [N, C, spatial...], MaxPool's Indices I like X, optional
// output_shape (a constant) → Y [N, C, unpooled...]. The importer lowers it into a ScatterElements into zeros
// (onnx_import/lowering/max_unpool.h, which says how the shape is found).
#include "runtime/ops/max_unpool.h"

#include <string>
#include <vector>

#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {

// An ints attribute of one value per spatial axis (`count` of them), `fallback` each when absent.
Expected<std::vector<int64_t>> per_axis(const ir::Attributes& attrs, const char* name, size_t count, int64_t fallback) {
  if (!attrs.has(name)) return std::vector<int64_t>(count, fallback);
  const std::vector<int64_t>& v = attrs.get_ints(name);
  if (v.size() != count)
    return invalid_model(std::string(name) + " has " + std::to_string(v.size()) + " values, expected " +
                         std::to_string(count));
  return v;
}

Status max_unpool_infer(InferContext& ctx) {
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(0, {DType::kFloat32}));
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(1, {DType::kInt64}));
  const Shape& x = ctx.input(0).shape;
  if (x.size() < 3) return ctx.error("X must be [N, C, spatial...], got " + shape_to_string(x));
  if (ctx.input(1).shape != x)
    return ctx.error("I " + shape_to_string(ctx.input(1).shape) + " must have X's shape " + shape_to_string(x));
  Expected<Shape> y = max_unpool_shape(ctx.attrs(), x);
  if (!y) return ctx.error(y.status().message());
  if (ctx.has_input(2)) {
    UCUDNN_RETURN_IF_ERROR(ctx.expect_constant(2, "output_shape"));
    UCUDNN_ASSIGN_OR_RETURN(const std::vector<int64_t> given, ctx.input(2).constant->to_int64_vector());
    if (given.size() != x.size() || given[0] != x[0] || given[1] != x[1])
      return ctx.error("output_shape " + shape_to_string(given) + " must be [N, C, spatial...] with X's N and C");
    for (size_t d = 2; d < given.size(); ++d)
      if (given[d] < (*y)[d])
        return ctx.unsupported_error("output_shape " + shape_to_string(given) + " is smaller than the unpooled " +
                                     shape_to_string(*y) + " (it may only pad it)");
    y = Shape(given.begin(), given.end());
  }
  ctx.set_output(0, DType::kFloat32, std::move(*y));
  return Status::ok();
}

}  // namespace

Expected<Shape> max_unpool_shape(const ir::Attributes& attrs, const Shape& x) {
  const size_t axes = x.size() - 2;
  UCUDNN_ASSIGN_OR_RETURN(const std::vector<int64_t> kernel, per_axis(attrs, "kernel_shape", axes, 1));
  UCUDNN_ASSIGN_OR_RETURN(const std::vector<int64_t> strides, per_axis(attrs, "strides", axes, 1));
  UCUDNN_ASSIGN_OR_RETURN(const std::vector<int64_t> pads, per_axis(attrs, "pads", 2 * axes, 0));
  Shape y = {x[0], x[1]};
  for (size_t d = 0; d < axes; ++d) {
    if (kernel[d] < 1 || strides[d] < 1 || pads[d] < 0 || pads[d + axes] < 0)
      return invalid_model("kernel_shape, strides and pads must be positive (pads non-negative)");
    const int64_t size = (x[d + 2] - 1) * strides[d] + kernel[d] - pads[d] - pads[d + axes];
    if (size < 0) return invalid_model("spatial axis " + std::to_string(d) + " unpools to a negative size");
    y.push_back(size);
  }
  return y;
}

const OpDescriptor& describe_MaxUnpool() {
  static const OpDescriptor d{
      .kind = OpKind::kMaxUnpool,
      .min_inputs = 2,
      .max_inputs = 3,
      .min_opset = 9,
      .attrs = {attr_required("kernel_shape", ir::AttrType::kInts), attr_optional("pads", ir::AttrType::kInts),
                attr_optional("strides", ir::AttrType::kInts)},
      .infer = max_unpool_infer};
  return d;
}

}  // namespace ucudnn
