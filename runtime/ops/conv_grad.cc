// STUB (training bring-up): descriptors of ConvGradData, ConvGradFilter; replaced by the real ones.
#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {
Status not_yet(InferContext& ctx) { return ctx.unsupported_error("not implemented yet"); }
}  // namespace

const OpDescriptor& describe_ConvGradData() {
  static const OpDescriptor d{.kind = OpKind::kConvGradData, .min_inputs = 0, .max_inputs = 8, .min_outputs = 1, .max_outputs = 8, .infer = not_yet, .internal = true};
  return d;
}

const OpDescriptor& describe_ConvGradFilter() {
  static const OpDescriptor d{.kind = OpKind::kConvGradFilter, .min_inputs = 0, .max_inputs = 8, .min_outputs = 1, .max_outputs = 8, .infer = not_yet, .internal = true};
  return d;
}

}  // namespace ucudnn
