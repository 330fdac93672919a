// CPU kernels of Trilu and CumSum (runtime/ops/trilu_cumsum.h): plain loops; Trilu copies element bytes
// (any dtype), CumSum adds in the element's type (integers wrap as the binary ops' do: in the unsigned type).
#include <cstring>

#include "runtime/cpu/cpu_kernel.h"
#include "runtime/ops/running_sum.h"
#include "runtime/ops/trilu_cumsum.h"

namespace ucudnn::cpu {

namespace {

Status run_trilu(const KernelArgs& args) {
  const Tensor& x = *args.src[0];
  Tensor& y = *args.dst[0];
  UCUDNN_ASSIGN_OR_RETURN(const int64_t k, trilu_diagonal(args.src.size() > 1 ? args.src[1] : nullptr));
  const bool upper = args.node.attrs.get_int("upper") != 0;
  const int64_t rows = x.shape()[x.shape().size() - 2], cols = x.shape().back();
  const size_t bytes = dtype_size(x.dtype());
  const auto* from = static_cast<const char*>(x.raw());
  auto* to = static_cast<char*>(y.raw());
  for (int64_t i = 0; i < x.numel(); ++i) {
    const int64_t c = i % cols, r = (i / cols) % rows;
    const bool keep = upper ? c - r >= k : c - r <= k;
    if (keep) std::memcpy(to + i * bytes, from + i * bytes, bytes);
    else std::memset(to + i * bytes, 0, bytes);
  }
  return Status::ok();
}

template <typename T>
void scan(const T* x, T* y, int64_t outer, int64_t length, int64_t inner, bool exclusive, bool reverse) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in = 0; in < inner; ++in) {
      const int64_t first = o * length * inner + in;
      running_sum(x + first, y + first, length, inner, exclusive, reverse);
    }
}

Status run_cumsum(const KernelArgs& args) {
  const Tensor& x = *args.src[0];
  Tensor& y = *args.dst[0];
  UCUDNN_ASSIGN_OR_RETURN(const int64_t axis, cumsum_axis(*args.src[1], x.rank()));
  const AxisSplit split = split_at_axis(x.shape(), axis);
  const int64_t length = x.shape()[static_cast<size_t>(axis)];
  const bool exclusive = args.node.attrs.get_int("exclusive") != 0, reverse = args.node.attrs.get_int("reverse") != 0;
  switch (x.dtype()) {
    case DType::kFloat32:
      scan(x.data<float>(), y.data<float>(), split.outer, length, split.inner, exclusive, reverse);
      return Status::ok();
    case DType::kInt32:
      scan(x.data<int32_t>(), y.data<int32_t>(), split.outer, length, split.inner, exclusive, reverse);
      return Status::ok();
    case DType::kInt64:
      scan(x.data<int64_t>(), y.data<int64_t>(), split.outer, length, split.inner, exclusive, reverse);
      return Status::ok();
    default: return unsupported(args.node.describe() + ": dtype " + dtype_name(x.dtype()));
  }
}

}  // namespace

const CpuKernel& cpu_kernel_Trilu() {
  static const CpuKernel k{.run = run_trilu};
  return k;
}
const CpuKernel& cpu_kernel_CumSum() {
  static const CpuKernel k{.run = run_cumsum};
  return k;
}

}  // namespace ucudnn::cpu
