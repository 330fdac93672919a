// Descriptor of GatherND (opsets 11–13: batch_dims from 12): slices of data picked by index tuples. The
// importer lowers it into Gathers (onnx_import/lowering/gather_nd.h).
#include <algorithm>
#include <string>
#include <vector>

#include "runtime/ops/indexing.h"
#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {

// Data's and indices' dims checked against batch_dims and the index tuple's length k; the output shape.
Status gather_nd_infer(InferContext& ctx) {
  if (!ctx.has_input(0)) return ctx.error("input 0 is required");
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(1, {DType::kInt64, DType::kInt32}));
  const Shape& data = ctx.input(0).shape;
  const Shape& indices = ctx.input(1).shape;
  const int64_t b = ctx.attrs().get_int("batch_dims");
  const auto r = static_cast<int64_t>(data.size()), q = static_cast<int64_t>(indices.size());
  if (b < 0 || b >= std::min(r, q))
    return ctx.error("batch_dims " + std::to_string(b) + " must be below the ranks of data and indices");
  for (int64_t d = 0; d < b; ++d)
    if (indices[d] != data[d])
      return ctx.error("indices' batch dim " + std::to_string(d) + " is " + std::to_string(indices[d]) + ", data's " +
                       std::to_string(data[d]));
  const int64_t k = indices.back();
  if (k < 1 || k > r - b)
    return ctx.error("indices' last dim " + std::to_string(k) + " (the index tuple's length) must lie in 1.." +
                     std::to_string(r - b));
  if (ctx.input(1).constant != nullptr) {
    UCUDNN_ASSIGN_OR_RETURN(const std::vector<int64_t> values, ctx.input(1).constant->to_int64_vector());
    const Status s = check_indices(values, std::vector<int64_t>(data.begin() + b, data.begin() + b + k), "indices");
    if (!s.is_ok()) return ctx.error(s.message());
  }
  Shape out(indices.begin(), indices.end() - 1);
  out.insert(out.end(), data.begin() + b + k, data.end());
  ctx.set_output(0, ctx.input(0).dtype, std::move(out));
  return Status::ok();
}

}  // namespace

const OpDescriptor& describe_GatherND() {
  static const OpDescriptor d{.kind = OpKind::kGatherND,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .min_opset = 11,
                              .attrs = {attr_int("batch_dims", 0)},
                              .infer = gather_nd_infer};
  return d;
}

}  // namespace ucudnn
