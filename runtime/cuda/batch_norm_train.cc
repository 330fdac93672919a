// CUDA kernels of the batch_norm_train family (runtime/ops/batch_norm_train.cc): BatchNormTrain and
// BatchNormGrad on our own kernels (batch_norm_train_kernels.cu) — deterministic double sums, any
// epsilon and rank, new_running_* allowed to alias running_* (cuDNN's training BN would need
// epsilon >= CUDNN_BN_MIN_EPSILON and in-place running statistics). prepare fixes the shape and
// the split of the per-channel sums, whose partial results live in the workspace; run is a
// partial-sum, a per-channel and an elementwise launch, walking X plane by plane (Note [plane tiles] in
// batch_norm_train_kernels.cu). NCHW only. The fused forms (Note [batch norm with its activation],
// runtime/ops/batch_norm_train.cc) take the residual Z or the forward's Y as input 5 and
// BatchNormGrad's dZ as output 3, in the same launches.
#include <cstdint>
#include <memory>

#include "runtime/cuda/batch_norm_train_kernels.h"
#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/cuda_kernel.h"
#include "runtime/ir/fusion.h"
#include "runtime/ir/layout.h"

namespace ucudnn::cuda {

namespace {

// Input 5 and output 3 of the fused forms, or nullptr when the node has none.
const float* fused_input(const RunArgs& a) { return a.src.size() > 5 ? a.src[5].as<const float>() : nullptr; }
float* fused_output(const RunArgs& a) { return a.dst.size() > 3 ? a.dst[3].as<float>() : nullptr; }

class BatchNormTrainState final : public KernelState {
 public:
  BatchNormShape shape;
  float epsilon = 1e-5f, momentum = 0.9f;
  bool relu = false;
  size_t workspace_bytes() const override { return batch_norm_workspace_bytes(shape); }
  Status run(const RunArgs& a) override {
    const BatchNormTrainArgs args{.src = a.src[0].as<const float>(),
                                  .scale = a.src[1].as<const float>(),
                                  .bias = a.src[2].as<const float>(),
                                  .running_mean = a.src[3].as<const float>(),
                                  .running_var = a.src[4].as<const float>(),
                                  .dst = a.dst[0].as<float>(),
                                  .new_running_mean = a.dst[1].as<float>(),
                                  .new_running_var = a.dst[2].as<float>(),
                                  .saved_mean = a.dst[3].as<float>(),
                                  .saved_inv_std = a.dst[4].as<float>(),
                                  .epsilon = epsilon,
                                  .momentum = momentum,
                                  .residual = fused_input(a),
                                  .relu = relu};
    UCUDNN_CUDA_CHECK(launch_batch_norm_train(args, shape, a.workspace, a.ctx.stream()), context);
    return Status::ok();
  }
};

class BatchNormGradState final : public KernelState {
 public:
  BatchNormShape shape;
  bool relu = false;
  size_t workspace_bytes() const override { return batch_norm_workspace_bytes(shape); }
  Status run(const RunArgs& a) override {
    const BatchNormGradArgs args{.grad = a.src[0].as<const float>(),
                                 .src = a.src[1].as<const float>(),
                                 .scale = a.src[2].as<const float>(),
                                 .saved_mean = a.src[3].as<const float>(),
                                 .saved_inv_std = a.src[4].as<const float>(),
                                 .dst = a.dst[0].as<float>(),
                                 .dscale = a.dst[1].as<float>(),
                                 .dbias = a.dst[2].as<float>(),
                                 .fwd_dst = relu ? fused_input(a) : nullptr,
                                 .dresidual = fused_output(a)};
    UCUDNN_CUDA_CHECK(launch_batch_norm_grad(args, shape, a.workspace, a.ctx.stream()), context);
    return Status::ok();
  }
};

// X [N, C, ...] as [batch, channels, inner] with its sums' split.
BatchNormShape shape_of(const Shape& x) {
  BatchNormShape s;
  s.batch = x[0];
  s.channels = x[1];
  s.inner = s.batch * s.channels == 0 ? 0 : shape_numel(x) / (s.batch * s.channels);
  s.parts = batch_norm_parts(s.batch, s.channels, s.inner);
  return s;
}

// Whether the node carries the fused Relu; Unsupported for another activation.
Expected<bool> fused_relu(const PrepareArgs& a) {
  const std::string activation = ir::fused_activation(a.node);
  if (!activation.empty() && activation != "Relu")
    return a.unsupported_error("fused activation '" + activation + "' (\"\" or \"Relu\")");
  return activation == "Relu";
}

// X's shape as [batch, channels, inner] with its sums' split; X is input `x_input`. Input 5 (the fused
// forms' Z or Y), when present, must have X's shape.
Expected<BatchNormShape> batch_norm_shape(const PrepareArgs& a, size_t x_input) {
  if (ir::is_channels_last(a.node)) return a.unsupported_error("channels-last batch normalization");
  for (size_t i = 0; i < a.src_shapes.size(); ++i)
    if (a.has_src(i) && a.src_dtype(i) != DType::kFloat32) return a.unsupported_error("only float32");
  const Shape& x = a.src_shapes[x_input];
  if (a.has_src(5) && a.src_shapes[5] != x)
    return invalid_argument(a.describe() + ": input 5 must have X's shape " + shape_to_string(x));
  if (x.size() < 2) return invalid_argument(a.describe() + ": X must have rank >= 2");
  const BatchNormShape s = shape_of(x);
  if (s.inner > kBatchNormMaxPlane || s.channels > kBatchNormMaxChannels)
    return a.unsupported_error("X " + shape_to_string(x) + ": more than 2^31 - 1 channels or values a plane");
  if (s.channels > 0 && s.batch * s.inner < 2)
    return invalid_argument(a.describe() + ": X " + shape_to_string(x) + " has fewer than 2 values per channel");
  return s;
}

Expected<std::unique_ptr<KernelState>> prepare_batch_norm_train(const PrepareArgs& a) {
  UCUDNN_ASSIGN_OR_RETURN(BatchNormShape shape, batch_norm_shape(a, 0));
  auto s = std::make_unique<BatchNormTrainState>();
  s->shape = shape;
  UCUDNN_ASSIGN_OR_RETURN(s->relu, fused_relu(a));
  s->epsilon = a.node.attrs.get_float("epsilon");
  s->momentum = a.node.attrs.get_float("momentum");
  s->context = a.describe();
  return std::unique_ptr<KernelState>(std::move(s));
}

Expected<std::unique_ptr<KernelState>> prepare_batch_norm_grad(const PrepareArgs& a) {
  UCUDNN_ASSIGN_OR_RETURN(BatchNormShape shape, batch_norm_shape(a, 1));
  auto s = std::make_unique<BatchNormGradState>();
  s->shape = shape;
  UCUDNN_ASSIGN_OR_RETURN(s->relu, fused_relu(a));
  if (s->relu != a.has_src(5) || (!s->relu && a.dst_shapes.size() > 3))
    return invalid_argument(a.describe() + ": the forward's Y (input 5) and dZ (output 3) go with activation 'Relu'");
  if (a.dst_shapes.size() > 3 && a.dst_shapes[3] != a.src_shapes[1])
    return invalid_argument(a.describe() + ": dZ must have X's shape " + shape_to_string(a.src_shapes[1]));
  s->context = a.describe();
  return std::unique_ptr<KernelState>(std::move(s));
}

}  // namespace

size_t batch_norm_step_workspace(const ir::Graph& graph, const ir::Node& node) {
  if (node.op != OpKind::kBatchNormTrain && node.op != OpKind::kBatchNormGrad) return 0;
  const Shape& x = graph.value(node.inputs[node.op == OpKind::kBatchNormTrain ? 0 : 1]).shape;
  return x.size() < 2 ? 0 : batch_norm_workspace_bytes(shape_of(x));
}

const CudaKernel& cuda_kernel_BatchNormTrain() {
  static const CudaKernel k{.prepare = prepare_batch_norm_train};
  return k;
}

const CudaKernel& cuda_kernel_BatchNormGrad() {
  static const CudaKernel k{.prepare = prepare_batch_norm_grad};
  return k;
}

}  // namespace ucudnn::cuda
