// CUDA kernels of SgdUpdate and AdamWUpdate: our own elementwise kernels
// (optimizer_update_kernels.cu). prepare fixes the hyper-parameters from the attributes; run is one
// launch reading lr and step on the device (no host sync). Unlike the CPU, a step below 1 is not
// refused here (it would need a host read, Note [values checked on the host] in elementwise.cc):
// only the trainer feeds these internal ops, counting steps from 1.
#include <memory>
#include <string>

#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/cuda_kernel.h"
#include "runtime/cuda/optimizer_update_kernels.h"

namespace ucudnn::cuda {

namespace {

// The state inputs (0 .. state_count-1) and every output hold param's elements; lr and step are one value.
Status check_update_shapes(const PrepareArgs& a, size_t state_count) {
  const int64_t n = shape_numel(a.src_shapes[0]);
  for (size_t i = 0; i < state_count; ++i)
    if (a.src_dtype(i) != DType::kFloat32 || shape_numel(a.src_shapes[i]) != n)
      return invalid_argument(a.describe() + ": input " + std::to_string(i) + " must be float32 like param");
  for (const Shape& dst : a.dst_shapes)
    if (shape_numel(dst) != n) return invalid_argument(a.describe() + ": every output must have param's shape");
  if (a.src_dtype(state_count) != DType::kFloat32 || shape_numel(a.src_shapes[state_count]) != 1 ||
      a.src_dtype(state_count + 1) != DType::kInt64 || shape_numel(a.src_shapes[state_count + 1]) != 1)
    return invalid_argument(a.describe() + ": lr must be one float32 value and step one int64 value");
  return Status::ok();
}

class SgdState final : public KernelState {
 public:
  SgdHyper hyper;
  Status run(const RunArgs& a) override {
    UCUDNN_CUDA_CHECK(launch_sgd_update(a.src[0].as<const float>(), a.src[1].as<const float>(),
                                        a.src[2].as<const float>(), a.src[3].as<const float>(),
                                        a.src[4].as<const int64_t>(), a.dst[0].as<float>(), a.dst[1].as<float>(),
                                        a.src[0].numel(), hyper, a.ctx.stream()),
                      "");
    return Status::ok();
  }
};

Expected<std::unique_ptr<KernelState>> prepare_sgd(const PrepareArgs& a) {
  UCUDNN_RETURN_IF_ERROR(check_update_shapes(a, 3));
  auto s = std::make_unique<SgdState>();
  const ir::Attributes& attrs = a.node.attrs;
  s->hyper.momentum = attrs.get_float("momentum");
  s->hyper.dampening = attrs.get_float("dampening");
  s->hyper.weight_decay = attrs.get_float("weight_decay");
  s->hyper.nesterov = attrs.get_int("nesterov") != 0;
  return std::unique_ptr<KernelState>(std::move(s));
}

class AdamWState final : public KernelState {
 public:
  AdamWHyper hyper;
  Status run(const RunArgs& a) override {
    UCUDNN_CUDA_CHECK(launch_adamw_update(a.src[0].as<const float>(), a.src[1].as<const float>(),
                                          a.src[2].as<const float>(), a.src[3].as<const float>(),
                                          a.src[4].as<const float>(), a.src[5].as<const int64_t>(),
                                          a.dst[0].as<float>(), a.dst[1].as<float>(), a.dst[2].as<float>(),
                                          a.src[0].numel(), hyper, a.ctx.stream()),
                      "");
    return Status::ok();
  }
};

Expected<std::unique_ptr<KernelState>> prepare_adamw(const PrepareArgs& a) {
  UCUDNN_RETURN_IF_ERROR(check_update_shapes(a, 4));
  auto s = std::make_unique<AdamWState>();
  const ir::Attributes& attrs = a.node.attrs;
  s->hyper.beta1 = attrs.get_float("beta1");
  s->hyper.beta2 = attrs.get_float("beta2");
  s->hyper.epsilon = attrs.get_float("epsilon");
  s->hyper.weight_decay = attrs.get_float("weight_decay");
  return std::unique_ptr<KernelState>(std::move(s));
}

}  // namespace

const CudaKernel& cuda_kernel_SgdUpdate() {
  static const CudaKernel k{.prepare = prepare_sgd};
  return k;
}

const CudaKernel& cuda_kernel_AdamWUpdate() {
  static const CudaKernel k{.prepare = prepare_adamw};
  return k;
}

}  // namespace ucudnn::cuda
