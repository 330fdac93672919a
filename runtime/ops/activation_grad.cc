// STUB (training bring-up): descriptors of ActivationGrad, PReluGrad, DropoutTrain; replaced by the real ones.
#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {
Status not_yet(InferContext& ctx) { return ctx.unsupported_error("not implemented yet"); }
}  // namespace

const OpDescriptor& describe_ActivationGrad() {
  static const OpDescriptor d{.kind = OpKind::kActivationGrad, .min_inputs = 0, .max_inputs = 8, .min_outputs = 1, .max_outputs = 8, .infer = not_yet, .internal = true};
  return d;
}

const OpDescriptor& describe_PReluGrad() {
  static const OpDescriptor d{.kind = OpKind::kPReluGrad, .min_inputs = 0, .max_inputs = 8, .min_outputs = 1, .max_outputs = 8, .infer = not_yet, .internal = true};
  return d;
}

const OpDescriptor& describe_DropoutTrain() {
  static const OpDescriptor d{.kind = OpKind::kDropoutTrain, .min_inputs = 0, .max_inputs = 8, .min_outputs = 1, .max_outputs = 8, .infer = not_yet, .internal = true};
  return d;
}

}  // namespace ucudnn
