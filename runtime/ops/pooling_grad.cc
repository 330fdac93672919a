// STUB (training bring-up): descriptors of MaxPoolGrad, AveragePoolGrad; replaced by the real ones.
#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {
Status not_yet(InferContext& ctx) { return ctx.unsupported_error("not implemented yet"); }
}  // namespace

const OpDescriptor& describe_MaxPoolGrad() {
  static const OpDescriptor d{.kind = OpKind::kMaxPoolGrad, .min_inputs = 0, .max_inputs = 8, .min_outputs = 1, .max_outputs = 8, .infer = not_yet, .internal = true};
  return d;
}

const OpDescriptor& describe_AveragePoolGrad() {
  static const OpDescriptor d{.kind = OpKind::kAveragePoolGrad, .min_inputs = 0, .max_inputs = 8, .min_outputs = 1, .max_outputs = 8, .infer = not_yet, .internal = true};
  return d;
}

}  // namespace ucudnn
