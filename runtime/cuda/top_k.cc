// CUDA kernel of TopK (runtime/ops/top_k.h): one launch (top_k_kernels.cu), K read at prepare from its
// constant input.
#include <memory>
#include <utility>

#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/cuda_kernel.h"
#include "runtime/cuda/top_k_kernels.h"
#include "runtime/ops/top_k.h"

namespace ucudnn::cuda {

namespace {

class TopKState final : public KernelState {
 public:
  AxisSplit split;
  int64_t length = 0, k = 0;
  bool largest = true;
  Status run(const RunArgs& a) override {
    int64_t* indices = a.dst.size() > 1 ? a.dst[1].as<int64_t>() : nullptr;
    UCUDNN_CUDA_CHECK(launch_top_k(static_cast<int>(a.src[0].dtype), a.src[0].data, a.dst[0].data, indices,
                                   split.outer, length, split.inner, k, largest, a.ctx.stream()),
                      "");
    return Status::ok();
  }
};

Expected<std::unique_ptr<KernelState>> prepare_top_k(const PrepareArgs& a) {
  const Tensor* k_value = a.constant(1);
  if (k_value == nullptr) return a.unsupported_error("K computed at run time (only constants)");
  const Shape& x = a.src_shapes[0];
  const int64_t axis = normalize_axis(a.node.attrs.get_int("axis"), static_cast<int64_t>(x.size()));
  auto s = std::make_unique<TopKState>();
  s->length = x[static_cast<size_t>(axis)];
  UCUDNN_ASSIGN_OR_RETURN(s->k, top_k_count(*k_value, s->length));
  s->split = split_at_axis(x, axis);
  s->largest = a.node.attrs.get_int("largest") != 0;
  return std::unique_ptr<KernelState>(std::move(s));
}

}  // namespace

const CudaKernel& cuda_kernel_TopK() {
  static const CudaKernel k{.prepare = prepare_top_k};
  return k;
}

}  // namespace ucudnn::cuda
