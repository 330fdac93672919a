// CUDA kernels of Trilu and CumSum (runtime/ops/trilu_cumsum.h): one launch each (trilu_cumsum_kernels.cu),
// the diagonal and the axis read at prepare from their constant inputs.
#include <memory>
#include <utility>

#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/cuda_kernel.h"
#include "runtime/cuda/trilu_cumsum_kernels.h"
#include "runtime/ops/trilu_cumsum.h"

namespace ucudnn::cuda {

namespace {

using StateOr = Expected<std::unique_ptr<KernelState>>;

class TriluState final : public KernelState {
 public:
  int64_t rows = 0, cols = 0, k = 0;
  bool upper = true;
  Status run(const RunArgs& a) override {
    UCUDNN_CUDA_CHECK(launch_trilu(a.src[0].data, a.dst[0].data, dtype_size(a.src[0].dtype), a.dst[0].numel(), rows,
                                   cols, k, upper, a.ctx.stream()),
                      "");
    return Status::ok();
  }
};

StateOr prepare_trilu(const PrepareArgs& a) {
  if (a.has_src(1) && a.constant(1) == nullptr) return a.unsupported_error("k computed at run time (only constants)");
  auto s = std::make_unique<TriluState>();
  const Shape& x = a.src_shapes[0];
  s->rows = x[x.size() - 2];
  s->cols = x.back();
  UCUDNN_ASSIGN_OR_RETURN(s->k, trilu_diagonal(a.has_src(1) ? a.constant(1) : nullptr));
  s->upper = a.node.attrs.get_int("upper") != 0;
  return std::unique_ptr<KernelState>(std::move(s));
}

class CumSumState final : public KernelState {
 public:
  AxisSplit split;
  int64_t length = 0;
  bool exclusive = false, reverse = false;
  Status run(const RunArgs& a) override {
    UCUDNN_CUDA_CHECK(launch_cumsum(static_cast<int>(a.src[0].dtype), a.src[0].data, a.dst[0].data, split.outer,
                                    length, split.inner, exclusive, reverse, a.ctx.stream()),
                      "");
    return Status::ok();
  }
};

StateOr prepare_cumsum(const PrepareArgs& a) {
  const Tensor* axis_value = a.constant(1);
  if (axis_value == nullptr) return a.unsupported_error("axis computed at run time (only constants)");
  const Shape& x = a.src_shapes[0];
  UCUDNN_ASSIGN_OR_RETURN(const int64_t axis, cumsum_axis(*axis_value, static_cast<int64_t>(x.size())));
  auto s = std::make_unique<CumSumState>();
  s->split = split_at_axis(x, axis);
  s->length = x[static_cast<size_t>(axis)];
  s->exclusive = a.node.attrs.get_int("exclusive") != 0;
  s->reverse = a.node.attrs.get_int("reverse") != 0;
  return std::unique_ptr<KernelState>(std::move(s));
}

}  // namespace

const CudaKernel& cuda_kernel_Trilu() {
  static const CudaKernel k{.prepare = prepare_trilu};
  return k;
}
const CudaKernel& cuda_kernel_CumSum() {
  static const CudaKernel k{.prepare = prepare_cumsum};
  return k;
}

}  // namespace ucudnn::cuda
