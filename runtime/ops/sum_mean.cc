// Descriptors of Sum and Mean: the elementwise sum (and mean) of any number of float32 inputs, opset 8's
// multidirectional broadcasting (older opsets' same-shape inputs are a case of it). The importer lowers them
// into Adds and a Mul (onnx_import/lowering/sum_mean.h).
#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {

constexpr int kMaxOperands = 1 << 16;

Status sum_mean_infer(InferContext& ctx) {
  for (size_t i = 0; i < ctx.num_inputs(); ++i) UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(i, {DType::kFloat32}));
  return ctx.set_broadcast_output(DType::kFloat32);
}

}  // namespace

const OpDescriptor& describe_Sum() {
  static const OpDescriptor d{.kind = OpKind::kSum,
                              .min_inputs = 1,
                              .max_inputs = kMaxOperands,
                              .min_opset = 1,
                              .infer = sum_mean_infer};
  return d;
}

const OpDescriptor& describe_Mean() {
  static const OpDescriptor d{.kind = OpKind::kMean,
                              .min_inputs = 1,
                              .max_inputs = kMaxOperands,
                              .min_opset = 1,
                              .infer = sum_mean_infer};
  return d;
}

}  // namespace ucudnn
