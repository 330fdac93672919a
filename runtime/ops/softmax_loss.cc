// STUB (training bring-up): descriptors of SoftmaxGrad, LogSoftmaxGrad, SoftmaxCrossEntropyLoss, SoftmaxCrossEntropyLossGrad, ReduceSum, Expand; replaced by the real ones.
#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {
Status not_yet(InferContext& ctx) { return ctx.unsupported_error("not implemented yet"); }
}  // namespace

const OpDescriptor& describe_SoftmaxGrad() {
  static const OpDescriptor d{.kind = OpKind::kSoftmaxGrad, .min_inputs = 0, .max_inputs = 8, .min_outputs = 1, .max_outputs = 8, .infer = not_yet, .internal = true};
  return d;
}

const OpDescriptor& describe_LogSoftmaxGrad() {
  static const OpDescriptor d{.kind = OpKind::kLogSoftmaxGrad, .min_inputs = 0, .max_inputs = 8, .min_outputs = 1, .max_outputs = 8, .infer = not_yet, .internal = true};
  return d;
}

const OpDescriptor& describe_SoftmaxCrossEntropyLoss() {
  static const OpDescriptor d{.kind = OpKind::kSoftmaxCrossEntropyLoss, .min_inputs = 0, .max_inputs = 8, .min_outputs = 1, .max_outputs = 8, .infer = not_yet, .internal = true};
  return d;
}

const OpDescriptor& describe_SoftmaxCrossEntropyLossGrad() {
  static const OpDescriptor d{.kind = OpKind::kSoftmaxCrossEntropyLossGrad, .min_inputs = 0, .max_inputs = 8, .min_outputs = 1, .max_outputs = 8, .infer = not_yet, .internal = true};
  return d;
}

const OpDescriptor& describe_ReduceSum() {
  static const OpDescriptor d{.kind = OpKind::kReduceSum, .min_inputs = 0, .max_inputs = 8, .min_outputs = 1, .max_outputs = 8, .infer = not_yet, .internal = false};
  return d;
}

const OpDescriptor& describe_Expand() {
  static const OpDescriptor d{.kind = OpKind::kExpand, .min_inputs = 0, .max_inputs = 8, .min_outputs = 1, .max_outputs = 8, .infer = not_yet, .internal = false};
  return d;
}

}  // namespace ucudnn
