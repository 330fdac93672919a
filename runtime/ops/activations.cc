// Descriptors of the elementwise activations: Relu, LeakyRelu, PRelu, Sigmoid,
// Tanh, HardSigmoid, HardSwish, Clip, Elu. Output = input's dtype and shape
// (PRelu: the input's shape; its slope broadcasts to it).
#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {

Status same_as_float_input(InferContext& ctx) {
  UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(0, {DType::kFloat32}));
  ctx.set_output(0, ctx.input(0).dtype, ctx.input(0).shape);
  return Status::ok();
}

int64_t one_flop_per_element(const InferContext& ctx) { return shape_numel(ctx.output(0).shape); }

}  // namespace

const OpDescriptor& describe_Relu() {
  static const OpDescriptor d{
      .kind = OpKind::kRelu, .min_opset = 6, .infer = same_as_float_input, .flops = one_flop_per_element};
  return d;
}

}  // namespace ucudnn
