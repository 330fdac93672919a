// CUDA kernels of the batch_norm_train family (runtime/ops/batch_norm_train.cc): BatchNormTrain and
// BatchNormGrad on our own kernels (batch_norm_train_kernels.cu) — deterministic double sums, any
// epsilon and rank, new_running_* allowed to alias running_* (cuDNN's training BN would need
// epsilon >= CUDNN_BN_MIN_EPSILON and in-place running statistics). prepare fixes the shape and
// the split of the per-channel sums, whose partial results live in the workspace; run is a
// partial-sum, a per-channel and an elementwise launch, in NCHW or channels-last (Note
// [channels-last], runtime/ir/layout.h: X, Z, Y, dY, dX and dZ [N, H, W, C]). The fused forms (Note [batch norm with its
// activation], runtime/ops/batch_norm_train.cc) are the same launches with the residual, the Relu and
// dZ passed along.
#include <cstdint>
#include <memory>

#include "runtime/cuda/batch_norm_train_kernels.h"
#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/cuda_kernel.h"
#include "runtime/ir/fusion.h"
#include "runtime/ir/layout.h"

namespace ucudnn::cuda {

namespace {

class BatchNormTrainState final : public KernelState {
 public:
  BatchNormShape shape;
  float epsilon = 1e-5f, momentum = 0.9f;
  bool relu = false, residual = false;
  size_t workspace_bytes() const override { return batch_norm_workspace_bytes(shape); }
  Status run(const RunArgs& a) override {
    const BatchNormTrainArgs args{a.src[0].as<const float>(), a.src[1].as<const float>(), a.src[2].as<const float>(),
                                  a.src[3].as<const float>(), a.src[4].as<const float>(), a.dst[0].as<float>(),
                                  a.dst[1].as<float>(),       a.dst[2].as<float>(),       a.dst[3].as<float>(),
                                  a.dst[4].as<float>(),       epsilon,                    momentum,
                                  residual ? a.src[5].as<const float>() : nullptr,         relu};
    UCUDNN_CUDA_CHECK(launch_batch_norm_train(args, shape, a.workspace, a.ctx.stream()), context);
    return Status::ok();
  }
};

class BatchNormGradState final : public KernelState {
 public:
  BatchNormShape shape;
  bool relu = false, residual_grad = false;
  size_t workspace_bytes() const override { return batch_norm_workspace_bytes(shape); }
  Status run(const RunArgs& a) override {
    const BatchNormGradArgs args{a.src[0].as<const float>(), a.src[1].as<const float>(), a.src[2].as<const float>(),
                                 a.src[3].as<const float>(), a.src[4].as<const float>(), a.dst[0].as<float>(),
                                 a.dst[1].as<float>(),       a.dst[2].as<float>(),
                                 relu ? a.src[5].as<const float>() : nullptr,
                                 residual_grad ? a.dst[3].as<float>() : nullptr,
                                 relu};
    UCUDNN_CUDA_CHECK(launch_batch_norm_grad(args, shape, a.workspace, a.ctx.stream()), context);
    return Status::ok();
  }
};

// X [N, C, ...] (or [N, H, W, C] channels-last) as [batch, channels, inner] with its sums' split.
BatchNormShape shape_of(const Shape& x, bool channels_last) {
  BatchNormShape s;
  s.batch = x[0];
  s.channels = channels_last ? x.back() : x[1];
  s.inner = s.batch * s.channels == 0 ? 0 : shape_numel(x) / (s.batch * s.channels);
  s.channels_last = channels_last;
  s.parts = batch_norm_parts(s.batch, s.channels, s.inner, channels_last);
  return s;
}

// Whether the node carries the fused Relu (Note [batch norm with its activation]); another activation
// is refused.
Expected<bool> fused_relu(const PrepareArgs& a) {
  const std::string activation = ir::fused_activation(a.node);
  if (!activation.empty() && activation != "Relu")
    return a.unsupported_error("batch normalization fused with '" + activation + "' (only Relu)");
  return activation == "Relu";
}

// Fails unless every input of index >= first has X's shape (the residual Z, the forward's Y).
Status check_like_x(const PrepareArgs& a, size_t first, size_t x_input) {
  for (size_t i = first; i < a.src_shapes.size(); ++i)
    if (a.src_shapes[i] != a.src_shapes[x_input])
      return invalid_argument(a.describe() + ": input " + std::to_string(i) + " " +
                              shape_to_string(a.src_shapes[i]) + " must have X's shape " +
                              shape_to_string(a.src_shapes[x_input]));
  return Status::ok();
}

// X's shape as [batch, channels, inner] with its sums' split; X is input `x_input`.
Expected<BatchNormShape> batch_norm_shape(const PrepareArgs& a, size_t x_input) {
  const bool channels_last = ir::is_channels_last(a.node);
  if (channels_last && a.src_shapes[x_input].size() != 4)
    return a.unsupported_error("channels-last batch normalization of X that is not 4-D");
  for (size_t i = 0; i < a.src_shapes.size(); ++i)
    if (a.src_dtype(i) != DType::kFloat32) return a.unsupported_error("only float32");
  const Shape& x = a.src_shapes[x_input];
  if (x.size() < 2) return invalid_argument(a.describe() + ": X must have rank >= 2");
  const BatchNormShape s = shape_of(x, channels_last);
  if (s.channels > 0 && s.batch * s.inner < 2)
    return invalid_argument(a.describe() + ": X " + shape_to_string(x) + " has fewer than 2 values per channel");
  return s;
}

Expected<std::unique_ptr<KernelState>> prepare_batch_norm_train(const PrepareArgs& a) {
  UCUDNN_ASSIGN_OR_RETURN(BatchNormShape shape, batch_norm_shape(a, 0));
  auto s = std::make_unique<BatchNormTrainState>();
  s->shape = shape;
  UCUDNN_ASSIGN_OR_RETURN(s->relu, fused_relu(a));
  s->residual = a.has_src(5);
  UCUDNN_RETURN_IF_ERROR(check_like_x(a, 5, 0));
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
  if (s->relu != a.has_src(5))
    return invalid_argument(a.describe() + ": the forward's Y (input 5) comes with activation Relu and only then");
  UCUDNN_RETURN_IF_ERROR(check_like_x(a, 5, 1));
  s->residual_grad = a.node.outputs.size() > 3 && a.node.outputs[3] != ir::kNoValue;
  if (s->residual_grad && !s->relu)
    return invalid_argument(a.describe() + ": dZ (output 3) is written only by the fused Relu form");
  s->context = a.describe();
  return std::unique_ptr<KernelState>(std::move(s));
}

}  // namespace

size_t batch_norm_step_workspace(const ir::Graph& graph, const ir::Node& node) {
  if (node.op != OpKind::kBatchNormTrain && node.op != OpKind::kBatchNormGrad) return 0;
  const Shape& x = graph.value(node.inputs[node.op == OpKind::kBatchNormTrain ? 0 : 1]).shape;
  return x.size() < 2 ? 0 : batch_norm_workspace_bytes(shape_of(x, ir::is_channels_last(node) && x.size() == 4));
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
