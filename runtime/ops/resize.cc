// Descriptor of Resize (opset 11+): X, roi (tf_crop_and_resize only), scales or sizes → Y. What is
// supported and how the coordinates are computed: runtime/ops/resize.h. The scales or sizes must be
// constants (exporters write them so, or as Shape arithmetic the importer folds). No gradient rule.
#include "runtime/ops/resize.h"

#include <cmath>
#include <string>

#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {

std::string floats_to_string(const std::vector<float>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// The per-axis values `given` (for the axes `axes`, or all of them) spread over every axis of a
// rank-`rank` X; the others take `fill`.
template <typename T>
Expected<std::vector<T>> spread_over_axes(const std::vector<T>& given, const ir::Attributes& attrs, size_t rank,
                                          T fill, const char* what) {
  if (!attrs.has("axes")) {
    if (given.size() != rank)
      return invalid_model(std::string(what) + " has " + std::to_string(given.size()) + " values; X has rank " +
                           std::to_string(rank));
    return given;
  }
  const std::vector<int64_t>& axes = attrs.get_ints("axes");
  if (given.size() != axes.size())
    return invalid_model(std::string(what) + " has " + std::to_string(given.size()) + " values for " +
                         std::to_string(axes.size()) + " axes");
  std::vector<T> all(rank, fill);
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t axis = axes[i] < 0 ? axes[i] + static_cast<int64_t>(rank) : axes[i];
    if (axis < 0 || axis >= static_cast<int64_t>(rank) || seen[static_cast<size_t>(axis)])
      return invalid_model("axes " + shape_to_string(axes) + " are not distinct axes of a rank-" +
                           std::to_string(rank) + " X");
    seen[static_cast<size_t>(axis)] = true;
    all[static_cast<size_t>(axis)] = given[i];
  }
  return all;
}

}  // namespace

Expected<ResolvedResize> resolve_resize(const ir::Attributes& attrs, const Shape& x, const Tensor* scales,
                                        const Tensor* sizes) {
  ResolvedResize resolved;
  ResizeParams& p = resolved.params;
  const std::string& mode = attrs.get_string("mode");
  if (mode == "nearest") p.mode = ResizeMode::kNearest;
  else if (mode == "linear") p.mode = ResizeMode::kLinear;
  else if (mode == "cubic") p.mode = ResizeMode::kCubic;
  else return invalid_model("mode '" + mode + "' is not one of nearest, linear, cubic");

  const std::string& coordinates = attrs.get_string("coordinate_transformation_mode");
  if (coordinates == "half_pixel") p.coordinates = ResizeCoordinates::kHalfPixel;
  else if (coordinates == "half_pixel_symmetric") p.coordinates = ResizeCoordinates::kHalfPixelSymmetric;
  else if (coordinates == "pytorch_half_pixel") p.coordinates = ResizeCoordinates::kPytorchHalfPixel;
  else if (coordinates == "align_corners") p.coordinates = ResizeCoordinates::kAlignCorners;
  else if (coordinates == "asymmetric") p.coordinates = ResizeCoordinates::kAsymmetric;
  else if (coordinates == "tf_crop_and_resize" || coordinates == "tf_half_pixel_for_nn")
    return unsupported("coordinate_transformation_mode '" + coordinates + "' is not supported");
  else return invalid_model("coordinate_transformation_mode '" + coordinates + "' is unknown");

  const std::string& rounding = attrs.get_string("nearest_mode");
  if (rounding == "round_prefer_floor") p.rounding = NearestRounding::kRoundPreferFloor;
  else if (rounding == "round_prefer_ceil") p.rounding = NearestRounding::kRoundPreferCeil;
  else if (rounding == "floor") p.rounding = NearestRounding::kFloor;
  else if (rounding == "ceil") p.rounding = NearestRounding::kCeil;
  else return invalid_model("nearest_mode '" + rounding + "' is not one of round_prefer_floor, round_prefer_ceil, "
                            "floor, ceil");
  const size_t rank = x.size();
  if (rank != 3 && rank != 4)
    return unsupported("X of rank " + std::to_string(rank) + "; Resize supports [N, C, W] and [N, C, H, W]");
  const bool has_scales = scales != nullptr && scales->numel() > 0;
  const bool has_sizes = sizes != nullptr && sizes->numel() > 0;
  if (has_scales == has_sizes)
    return invalid_model(has_scales ? "scales and sizes are both given; give one"
                                    : "neither scales nor sizes is given (or known when the model is loaded)");
  std::vector<float> scale_of(rank, 1.0f);
  Shape out(x);
  if (has_scales) {
    if (scales->dtype() != DType::kFloat32)
      return invalid_model(std::string("scales must be float32, got ") + dtype_name(scales->dtype()));
    const std::vector<float> given(scales->data<float>(), scales->data<float>() + scales->numel());
    UCUDNN_ASSIGN_OR_RETURN(scale_of, spread_over_axes(given, attrs, rank, 1.0f, "scales"));
    for (size_t d = 0; d < rank; ++d) {
      if (!(scale_of[d] > 0.0f) || !std::isfinite(scale_of[d]))
        return invalid_model("scales " + floats_to_string(given) + " must be positive and finite");
      const double size = std::floor(static_cast<double>(x[d]) * static_cast<double>(scale_of[d]));
      if (size > 1e15) return invalid_model("scales " + floats_to_string(given) + " give an output too large");
      out[d] = static_cast<int64_t>(size);
    }
  } else {
    if (attrs.get_string("keep_aspect_ratio_policy") != "stretch")  // it applies to sizes only
      return unsupported("keep_aspect_ratio_policy '" + attrs.get_string("keep_aspect_ratio_policy") +
                         "' is not supported; 'stretch' is");
    auto given = sizes->to_int64_vector();
    if (!given) return invalid_model("sizes: " + given.status().message());
    for (int64_t size : *given)
      if (size < 0) return invalid_model("sizes " + shape_to_string(*given) + " has a negative size");
    // Axes not listed in `axes` keep their size (marked -1 here, which no given size can be).
    UCUDNN_ASSIGN_OR_RETURN(std::vector<int64_t> all, spread_over_axes(*given, attrs, rank, int64_t{-1}, "sizes"));
    for (size_t d = 0; d < rank; ++d) {
      out[d] = all[d] < 0 ? x[d] : all[d];
      scale_of[d] = x[d] > 0 ? static_cast<float>(out[d]) / static_cast<float>(x[d]) : 1.0f;
    }
  }
  for (size_t d = 0; d < 2; ++d)
    if (out[d] != x[d] || scale_of[d] != 1.0f)  // a scale that rounds back to the size still moves the samples
      return unsupported("resizing axis " + std::to_string(d) + " (" + (d == 0 ? "the batch" : "the channels") +
                         ") by " + std::to_string(scale_of[d]) + ", from " + std::to_string(x[d]) + " to " +
                         std::to_string(out[d]) + "; Resize supports the spatial axes");
  for (size_t d = 2; d < rank; ++d)
    if (out[d] < 1 || x[d] < 1)
      return invalid_model("resizing spatial axis " + std::to_string(d) + " from " + std::to_string(x[d]) + " to " +
                           std::to_string(out[d]) + " (both must be at least 1)");
  p.cubic_a = attrs.get_float("cubic_coeff_a");
  p.exclude_outside = attrs.get_int("exclude_outside") != 0;
  if (attrs.get_int("antialias") != 0 && p.mode != ResizeMode::kNearest)
    for (size_t d = 2; d < rank; ++d)
      if (out[d] < x[d]) return unsupported("antialias when shrinking is not supported");

  auto axis = [&](size_t d) {
    ResizeAxis a;
    a.in = x[d];
    a.out = out[d];
    a.scale = scale_of[d];
    a.length = has_scales ? static_cast<float>(a.in) * a.scale : static_cast<float>(a.out);
    // half_pixel_symmetric: the resized image centred on the input's (ONNX opset 19).
    const float adjustment = static_cast<float>(a.out) / (a.scale * static_cast<float>(a.in));
    a.offset = static_cast<float>(a.in) / 2.0f * (1.0f - adjustment);
    return a;
  };
  if (rank == 4) p.h = axis(2);
  p.w = axis(rank - 1);
  resolved.output = std::move(out);
  return resolved;
}

namespace {

Status infer_resize(InferContext& ctx) {
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(0, {DType::kFloat32}));
  // What no scales or sizes would make supported comes first, before asking for them at load.
  const std::string& coordinates = ctx.attrs().get_string("coordinate_transformation_mode");
  if (coordinates == "tf_crop_and_resize" || coordinates == "tf_half_pixel_for_nn")
    return ctx.unsupported_error("coordinate_transformation_mode '" + coordinates + "' is not supported");
  const Tensor* scales = nullptr;
  const Tensor* sizes = nullptr;
  if (ctx.has_input(2)) {
    UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(2, {DType::kFloat32}));
    if (shape_numel(ctx.input(2).shape) > 0) UCUDNN_RETURN_IF_ERROR(ctx.expect_constant(2, "scales"));
    scales = ctx.input(2).constant;
  }
  if (ctx.has_input(3)) {
    UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(3, {DType::kInt64}));
    UCUDNN_RETURN_IF_ERROR(ctx.expect_constant(3, "sizes"));
    sizes = ctx.input(3).constant;
  }
  auto params = resolve_resize(ctx.attrs(), ctx.input(0).shape, scales, sizes);
  if (!params) {
    if (params.status().code() == StatusCode::kUnsupported) return ctx.unsupported_error(params.status().message());
    return ctx.error(params.status().message());
  }
  ctx.set_output(0, DType::kFloat32, params->output);
  return Status::ok();
}

}  // namespace

const OpDescriptor& describe_Resize() {
  static const OpDescriptor d{
      .kind = OpKind::kResize,
      .min_inputs = 1,
      .max_inputs = 4,
      .min_opset = 11,
      .attrs = {attr_int("antialias", 0), attr_optional("axes", ir::AttrType::kInts),
                attr_string("coordinate_transformation_mode", "half_pixel"), attr_float("cubic_coeff_a", -0.75f),
                attr_int("exclude_outside", 0), attr_float("extrapolation_value", 0.0f),
                attr_string("keep_aspect_ratio_policy", "stretch"), attr_string("mode", "nearest"),
                attr_string("nearest_mode", "round_prefer_floor")},
      .infer = infer_resize};
  return d;
}

}  // namespace ucudnn
