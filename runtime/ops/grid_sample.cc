// Descriptor of GridSample and resolve_grid_sample (grid_sample.h).
#include "runtime/ops/grid_sample.h"

#include <string>

#include "runtime/core/bytes.h"
#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

Expected<GridSampleParams> resolve_grid_sample(const ir::Attributes& attrs, const Shape& x, const Shape& grid) {
  GridSampleParams p;
  const std::string mode = attrs.get_string("mode");
  if (mode == "bilinear" || mode == "linear")
    p.mode = GridSampleMode::kBilinear;
  else if (mode == "nearest")
    p.mode = GridSampleMode::kNearest;
  else if (mode == "bicubic" || mode == "cubic")
    p.mode = GridSampleMode::kBicubic;
  else
    return invalid_model("mode '" + mode + "' (bilinear/linear, nearest and bicubic/cubic are defined)");
  const std::string padding = attrs.get_string("padding_mode");
  if (padding == "zeros")
    p.padding = GridSamplePadding::kZeros;
  else if (padding == "border")
    p.padding = GridSamplePadding::kBorder;
  else if (padding == "reflection")
    p.padding = GridSamplePadding::kReflection;
  else
    return invalid_model("padding_mode '" + padding + "' (zeros, border and reflection are defined)");
  p.align_corners = attrs.get_int("align_corners") != 0;
  p.in_h = x[2];
  p.in_w = x[3];
  p.out_h = grid[1];
  p.out_w = grid[2];
  return p;
}

namespace {

Status grid_sample_infer(InferContext& ctx) {
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(0, {DType::kFloat32}));
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(1, {DType::kFloat32}));
  const Shape& x = ctx.input(0).shape;
  const Shape& grid = ctx.input(1).shape;
  if (x.size() == 5) return ctx.unsupported_error("volumetric GridSample (X of rank 5)");
  if (x.size() != 4) return ctx.error("X must be [N, C, H, W], got " + shape_to_string(x));
  if (grid.size() != 4 || grid[0] != x[0] || grid[3] != 2)
    return ctx.error("Grid must be [N, H_out, W_out, 2] with X's N = " + std::to_string(x[0]) + ", got " +
                     shape_to_string(grid));
  if ((x[2] == 0 || x[3] == 0) && grid[1] * grid[2] > 0)
    return ctx.error("cannot sample an empty image " + shape_to_string(x));
  const Expected<GridSampleParams> p = resolve_grid_sample(ctx.attrs(), x, grid);
  if (!p) return ctx.error(p.status().message());
  ctx.set_output(0, DType::kFloat32, Shape{x[0], x[1], grid[1], grid[2]});
  return Status::ok();
}

// Per output element: 4 (bilinear) to 16 (bicubic) multiply-adds; counted as bilinear's.
int64_t grid_sample_flops(const InferContext& ctx) {
  return saturating_mul(int64_t{8}, shape_numel(ctx.output(0).shape));
}

}  // namespace

const OpDescriptor& describe_GridSample() {
  static const OpDescriptor d{
      .kind = OpKind::kGridSample,
      .min_inputs = 2,
      .max_inputs = 2,
      .min_opset = 16,
      .attrs = {attr_int("align_corners", 0), attr_string("mode", "bilinear"), attr_string("padding_mode", "zeros")},
      .infer = grid_sample_infer,
      .flops = grid_sample_flops};
  return d;
}

}  // namespace ucudnn
