// CPU kernel of TopK (runtime/ops/top_k.h): each line along the axis sorted partially, best first, equal
// values in index order, NaN above every number.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <type_traits>
#include <vector>

#include "runtime/cpu/cpu_kernel.h"
#include "runtime/ops/top_k.h"

namespace ucudnn::cpu {

namespace {

template <typename T>
void top_k(const T* x, T* values, int64_t* indices, int64_t outer, int64_t length, int64_t inner, int64_t k,
           bool largest) {
  std::vector<int64_t> order(static_cast<size_t>(length));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in = 0; in < inner; ++in) {
      const T* line = x + o * length * inner + in;
      std::iota(order.begin(), order.end(), int64_t{0});
      std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int64_t a, int64_t b) {
        const T va = line[a * inner], vb = line[b * inner];
        if constexpr (std::is_floating_point_v<T>) {  // NaN above every number (as PyTorch's topk)
          const bool na = std::isnan(va), nb = std::isnan(vb);
          if (na || nb) return na && nb ? a < b : largest ? na : nb;
        }
        if (va != vb) return largest ? va > vb : va < vb;
        return a < b;
      });
      for (int64_t r = 0; r < k; ++r) {
        const int64_t at = (o * k + r) * inner + in;
        values[at] = line[order[static_cast<size_t>(r)] * inner];
        if (indices != nullptr) indices[at] = order[static_cast<size_t>(r)];
      }
    }
}

Status run_top_k(const KernelArgs& args) {
  const Tensor& x = *args.src[0];
  const int64_t axis = normalize_axis(args.node.attrs.get_int("axis"), x.rank());
  const int64_t length = x.shape()[static_cast<size_t>(axis)];
  UCUDNN_ASSIGN_OR_RETURN(const int64_t k, top_k_count(*args.src[1], length));
  const AxisSplit split = split_at_axis(x.shape(), axis);
  const bool largest = args.node.attrs.get_int("largest") != 0;
  int64_t* indices = args.dst.size() > 1 && args.dst[1] != nullptr ? args.dst[1]->data<int64_t>() : nullptr;
  switch (x.dtype()) {
    case DType::kFloat32:
      top_k(x.data<float>(), args.dst[0]->data<float>(), indices, split.outer, length, split.inner, k, largest);
      return Status::ok();
    case DType::kInt32:
      top_k(x.data<int32_t>(), args.dst[0]->data<int32_t>(), indices, split.outer, length, split.inner, k, largest);
      return Status::ok();
    case DType::kInt64:
      top_k(x.data<int64_t>(), args.dst[0]->data<int64_t>(), indices, split.outer, length, split.inner, k, largest);
      return Status::ok();
    default: return unsupported(args.node.describe() + ": dtype " + dtype_name(x.dtype()));
  }
}

}  // namespace

const CpuKernel& cpu_kernel_TopK() {
  static const CpuKernel k{.run = run_top_k};
  return k;
}

}  // namespace ucudnn::cpu
