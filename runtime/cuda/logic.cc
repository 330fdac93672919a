// CUDA kernels of the comparisons, the logical ops, Where, IsNaN and IsInf (runtime/ops/logic.cc): one launch each
// (logic_kernels.cu), the operands' broadcast strides fixed at prepare.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/cuda_kernel.h"
#include "runtime/cuda/logic_kernels.h"
#include "runtime/ops/logic.h"

namespace ucudnn::cuda {

namespace {

// The broadcast strides of operands src[0..count) against the output; false above kMaxDims.
bool broadcast_layout(const PrepareArgs& a, int count, Broadcast3* layout) {
  const Shape& out = a.dst_shapes[0];
  if (out.size() > static_cast<size_t>(kMaxDims)) return false;
  layout->rank = static_cast<int>(out.size());
  for (size_t d = 0; d < out.size(); ++d) layout->dims[d] = out[d];
  for (int k = 0; k < count; ++k) {
    const Shape& operand = a.src_shapes[static_cast<size_t>(k)];
    const std::vector<int64_t> dense = shape_strides(operand);
    const size_t shift = out.size() - operand.size();
    for (size_t d = 0; d < out.size(); ++d)
      layout->strides[k][d] = d < shift || operand[d - shift] == 1 ? 0 : dense[d - shift];
  }
  return true;
}

class CompareState final : public KernelState {
 public:
  CompareOp op = CompareOp::kEqual;
  DType dtype = DType::kFloat32;
  Broadcast3 layout;
  Status run(const RunArgs& a) override {
    UCUDNN_CUDA_CHECK(launch_compare(op, static_cast<int>(dtype), a.src[0].data, a.src[1].data, a.dst[0].as<bool>(),
                                     a.dst[0].numel(), layout, a.ctx.stream()),
                      "");
    return Status::ok();
  }
};

Expected<std::unique_ptr<KernelState>> prepare_compare(const PrepareArgs& a, CompareOp op) {
  auto s = std::make_unique<CompareState>();
  s->op = op;
  s->dtype = a.src_dtype(0);
  if (!broadcast_layout(a, 2, &s->layout)) return a.unsupported_error("rank above " + std::to_string(kMaxDims));
  return std::unique_ptr<KernelState>(std::move(s));
}

class NotState final : public KernelState {
 public:
  Status run(const RunArgs& a) override {
    UCUDNN_CUDA_CHECK(launch_not(a.src[0].as<const bool>(), a.dst[0].as<bool>(), a.dst[0].numel(), a.ctx.stream()),
                      "");
    return Status::ok();
  }
};

class IsNaNState final : public KernelState {
 public:
  Status run(const RunArgs& a) override {
    UCUDNN_CUDA_CHECK(launch_is_nan(a.src[0].as<const float>(), a.dst[0].as<bool>(), a.dst[0].numel(), a.ctx.stream()),
                      "");
    return Status::ok();
  }
};

class IsInfState final : public KernelState {
 public:
  bool negative = true, positive = true;
  Status run(const RunArgs& a) override {
    UCUDNN_CUDA_CHECK(launch_is_inf(a.src[0].as<const float>(), a.dst[0].as<bool>(), a.dst[0].numel(), negative,
                                    positive, a.ctx.stream()),
                      "");
    return Status::ok();
  }
};

class WhereState final : public KernelState {
 public:
  Broadcast3 layout;
  Status run(const RunArgs& a) override {
    UCUDNN_CUDA_CHECK(launch_where(a.src[0].as<const bool>(), a.src[1].data, a.src[2].data, a.dst[0].data,
                                   dtype_size(a.dst[0].dtype), a.dst[0].numel(), layout, a.ctx.stream()),
                      "");
    return Status::ok();
  }
};

Expected<std::unique_ptr<KernelState>> prepare_where(const PrepareArgs& a) {
  auto s = std::make_unique<WhereState>();
  if (!broadcast_layout(a, 3, &s->layout)) return a.unsupported_error("rank above " + std::to_string(kMaxDims));
  return std::unique_ptr<KernelState>(std::move(s));
}

}  // namespace

#define UCUDNN_COMPARE_KERNEL(name)                                          \
  const CudaKernel& cuda_kernel_##name() {                                   \
    static const CudaKernel k{.prepare = [](const PrepareArgs& a) {          \
      return prepare_compare(a, CompareOp::k##name);                         \
    }};                                                                      \
    return k;                                                                \
  }
UCUDNN_FOR_EACH_COMPARISON(UCUDNN_COMPARE_KERNEL)
#undef UCUDNN_COMPARE_KERNEL

const CudaKernel& cuda_kernel_Not() {
  static const CudaKernel k{.prepare = [](const PrepareArgs&) -> Expected<std::unique_ptr<KernelState>> {
    return std::unique_ptr<KernelState>(std::make_unique<NotState>());
  }};
  return k;
}

const CudaKernel& cuda_kernel_IsNaN() {
  static const CudaKernel k{.prepare = [](const PrepareArgs&) -> Expected<std::unique_ptr<KernelState>> {
    return std::unique_ptr<KernelState>(std::make_unique<IsNaNState>());
  }};
  return k;
}

const CudaKernel& cuda_kernel_IsInf() {
  static const CudaKernel k{.prepare = [](const PrepareArgs& a) -> Expected<std::unique_ptr<KernelState>> {
    auto s = std::make_unique<IsInfState>();
    s->negative = a.node.attrs.get_int("detect_negative") != 0;
    s->positive = a.node.attrs.get_int("detect_positive") != 0;
    return std::unique_ptr<KernelState>(std::move(s));
  }};
  return k;
}

const CudaKernel& cuda_kernel_Where() {
  static const CudaKernel k{.prepare = prepare_where};
  return k;
}

}  // namespace ucudnn::cuda
