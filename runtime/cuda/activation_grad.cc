// CUDA kernels of the activation_grad family (runtime/ops/activation_grad.cc):
// ActivationGrad, PReluGrad, DropoutTrain — float32, our own kernels
// (activation_grad_kernels.cu). prepare fixes the parameters (the activation,
// alpha, beta, the slope's broadcast layout, the ratio); run is one launch
// (PReluGrad: a memset of dSlope, then one launch). Clip's bounds and the
// dropout seed stay on the device and are read by the kernels (no host sync).
#include <memory>
#include <string>

#include "runtime/cuda/activation_grad_kernels.h"
#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/cuda_kernel.h"
#include "runtime/cuda/elementwise.h"

namespace ucudnn::cuda {

namespace {

Status expect_float32(const PrepareArgs& a, size_t count) {
  for (size_t i = 0; i < count; ++i)
    if (a.has_src(i) && a.src_dtype(i) != DType::kFloat32) return a.unsupported_error("only float32");
  return Status::ok();
}

class ActivationGradState final : public KernelState {
 public:
  ActivationKind kind = ActivationKind::kRelu;
  float alpha = 0, beta = 0;
  bool has_low = false, has_high = false;
  Status run(const RunArgs& a) override {
    const float* low = has_low ? a.src[2].as<const float>() : nullptr;
    const float* high = has_high ? a.src[3].as<const float>() : nullptr;
    UCUDNN_CUDA_CHECK(launch_activation_grad(kind, a.src[0].as<const float>(), a.src[1].as<const float>(),
                                             a.dst[0].as<float>(), a.dst[0].numel(), alpha, beta, low, high,
                                             a.ctx.stream()),
                      "");
    return Status::ok();
  }
};

Expected<std::unique_ptr<KernelState>> prepare_activation_grad(const PrepareArgs& a) {
  UCUDNN_RETURN_IF_ERROR(expect_float32(a, 4));
  auto s = std::make_unique<ActivationGradState>();
  const std::string& name = a.node.attrs.get_string("activation");
  if (!activation_kind_from_name(name, &s->kind))
    return invalid_argument(a.describe() + ": activation '" + name + "' is not one of " + activation_kind_names());
  s->alpha = a.node.attrs.get_float("alpha");
  s->beta = a.node.attrs.get_float("beta");
  s->has_low = a.has_src(2);
  s->has_high = a.has_src(3);
  return std::unique_ptr<KernelState>(std::move(s));
}

class PReluGradState final : public KernelState {
 public:
  StridedLayout layout;
  Status run(const RunArgs& a) override {
    UCUDNN_CUDA_CHECK(launch_prelu_grad(a.src[0].as<const float>(), a.src[1].as<const float>(),
                                        a.src[2].as<const float>(), a.dst[0].as<float>(), a.dst[1].as<float>(),
                                        a.src[1].numel(), a.src[2].numel(), layout, a.ctx.stream()),
                      "");
    return Status::ok();
  }
};

Expected<std::unique_ptr<KernelState>> prepare_prelu_grad(const PrepareArgs& a) {
  UCUDNN_RETURN_IF_ERROR(expect_float32(a, 3));
  auto s = std::make_unique<PReluGradState>();
  if (!set_broadcast_layout(a.src_shapes[1], a.src_shapes[2], 0, &s->layout))
    return a.unsupported_error("rank above " + std::to_string(kMaxDims));
  return std::unique_ptr<KernelState>(std::move(s));
}

class DropoutTrainState final : public KernelState {
 public:
  float ratio = 0, scale = 1;
  Status run(const RunArgs& a) override {
    UCUDNN_CUDA_CHECK(launch_dropout_train(a.src[0].as<const float>(), a.src[1].as<const int64_t>(),
                                           a.dst[0].as<float>(), a.dst[1].as<float>(), a.src[0].numel(), ratio,
                                           scale, a.ctx.stream()),
                      "");
    return Status::ok();
  }
};

Expected<std::unique_ptr<KernelState>> prepare_dropout_train(const PrepareArgs& a) {
  UCUDNN_RETURN_IF_ERROR(expect_float32(a, 1));
  if (a.src_dtype(1) != DType::kInt64) return a.unsupported_error("the seed must be int64");
  auto s = std::make_unique<DropoutTrainState>();
  s->ratio = a.node.attrs.get_float("ratio");
  if (!(s->ratio >= 0.0f && s->ratio < 1.0f))
    return invalid_argument(a.describe() + ": ratio " + std::to_string(s->ratio) + " must be in [0, 1)");
  s->scale = dropout_scale(s->ratio);
  return std::unique_ptr<KernelState>(std::move(s));
}

}  // namespace

const CudaKernel& cuda_kernel_ActivationGrad() {
  static const CudaKernel k{.prepare = prepare_activation_grad};
  return k;
}

const CudaKernel& cuda_kernel_PReluGrad() {
  static const CudaKernel k{.prepare = prepare_prelu_grad};
  return k;
}

const CudaKernel& cuda_kernel_DropoutTrain() {
  static const CudaKernel k{.prepare = prepare_dropout_train};
  return k;
}

}  // namespace ucudnn::cuda
