// Descriptor of Tile: X [d0, ..., dk] of any dtype, repeats (int64 [k+1], a constant) → Y [d0·r0, ..., dk·rk].
// The importer lowers it into Reshape → Expand → Reshape (onnx_import/lowering/tile.h).
#include <limits>
#include <string>
#include <vector>

#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {

Status tile_infer(InferContext& ctx) {
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(1, {DType::kInt64}));
  UCUDNN_RETURN_IF_ERROR(ctx.expect_constant(1, "repeats"));
  const Shape& in = ctx.input(0).shape;
  UCUDNN_ASSIGN_OR_RETURN(const std::vector<int64_t> repeats, ctx.input(1).constant->to_int64_vector());
  if (repeats.size() != in.size())
    return ctx.error("repeats has " + std::to_string(repeats.size()) + " values; X has rank " +
                     std::to_string(in.size()));
  Shape out;
  for (size_t d = 0; d < in.size(); ++d) {
    if (repeats[d] < 0) return ctx.error("repeats " + shape_to_string(repeats) + " has a negative value");
    if (in[d] != 0 && repeats[d] > std::numeric_limits<int64_t>::max() / in[d])
      return ctx.error("the tiled dimension " + std::to_string(d) + " overflows int64");
    out.push_back(in[d] * repeats[d]);
  }
  ctx.set_output(0, ctx.input(0).dtype, std::move(out));
  return Status::ok();
}

}  // namespace

const OpDescriptor& describe_Tile() {
  static const OpDescriptor d{.kind = OpKind::kTile,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .min_opset = 6,
                              .infer = tile_infer};
  return d;
}

}  // namespace ucudnn
