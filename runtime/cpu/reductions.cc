// CPU kernels of ReduceMean, ReduceSum, Softmax and LogSoftmax (float32).
//
// ReduceMean/ReduceSum: each output element (threads split the outputs) sums its reduced
// sub-box in double, walking the reduced dims with an odometer; the kept dims
// give the base offset. Where the reduced dims are the innermost (a mean over H and W, over a
// last axis) the sub-box is contiguous and sum_in_float_runs sums it.
//
// Softmax/LogSoftmax view the input as [outer, n, inner]
// (see Note [softmax axis by opset] in runtime/ops/reductions.cc) and
// normalise each of the outer*inner lines of length n, subtracting the line's
// max first so exp never overflows.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "runtime/cpu/cpu_kernel.h"
#include "runtime/cpu/float_sums.h"

namespace ucudnn::cpu {

namespace {

constexpr int64_t kParallelThreshold = 16384;

// The sum over the reduced dims, times 1/count for a mean.
Status run_reduce(const KernelArgs& args, bool mean) {
  const Tensor& src = *args.src[0];
  Tensor& dst = *args.dst[0];
  const Shape& in = src.shape();
  const int64_t rank = src.rank();
  std::vector<int64_t> axes;
  if (args.src.size() > 1 && args.src[1] != nullptr) {
    UCUDNN_ASSIGN_OR_RETURN(axes, args.src[1]->to_int64_vector());
  }
  if (axes.empty() && args.node.attrs.get_int("noop_with_empty_axes") != 0) {
    if (dst.raw() != src.raw() && src.nbytes() > 0) std::memcpy(dst.raw(), src.raw(), src.nbytes());
    return Status::ok();
  }
  std::vector<bool> reduce(in.size(), axes.empty());
  for (int64_t a : axes) {
    const int64_t n = normalize_axis(a, rank);
    if (n < 0) return invalid_argument(args.node.describe() + ": axis " + std::to_string(a) + " is out of range");
    reduce[n] = true;
  }
  const std::vector<int64_t> strides = shape_strides(in);
  std::vector<int64_t> kept_dims, kept_strides, red_dims, red_strides;
  int64_t count = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (reduce[d]) {
      red_dims.push_back(in[d]);
      red_strides.push_back(strides[d]);
      count *= in[d];
    } else {
      kept_dims.push_back(in[d]);
      kept_strides.push_back(strides[d]);
    }
  }
  const float* s = src.data<float>();
  float* o = dst.data<float>();
  const int64_t outputs = dst.numel();
  const int64_t nk = static_cast<int64_t>(kept_dims.size());
  const int64_t nr = static_cast<int64_t>(red_dims.size());
  const double scale = !mean ? 1.0 : count == 0 ? 0.0 : 1.0 / static_cast<double>(count);
  // Kept dims, then reduced ones (false < true): output `out` sums the count floats at out · count.
  const bool innermost = std::is_sorted(reduce.begin(), reduce.end());
#pragma omp parallel if (outputs * count > kParallelThreshold)
  {
    std::vector<int64_t> index(static_cast<size_t>(nr));  // one odometer per thread
#pragma omp for schedule(static)
    for (int64_t out = 0; out < outputs; ++out) {
      double sum = 0;
      if (innermost) {
        sum = sum_in_float_runs(s + out * count, count);
      } else {
        int64_t offset = 0, rest = out;
        for (int64_t d = nk - 1; d >= 0; --d) {
          offset += (rest % kept_dims[d]) * kept_strides[d];
          rest /= kept_dims[d];
        }
        std::fill(index.begin(), index.end(), 0);
        for (int64_t k = 0; k < count; ++k) {
          sum += s[offset];
          for (int64_t d = nr - 1; d >= 0; --d) {  // odometer step over the reduced dims
            offset += red_strides[d];
            if (++index[d] < red_dims[d]) break;
            offset -= red_strides[d] * red_dims[d];
            index[d] = 0;
          }
        }
      }
      o[out] = mean && count == 0 ? NAN : static_cast<float>(sum * scale);
    }
  }
  return Status::ok();
}

Status run_softmax(const KernelArgs& args, bool log) {
  const Tensor& src = *args.src[0];
  const Shape& in = src.shape();
  const int64_t rank = src.rank();
  const bool old = args.node.opset < 13;
  const int64_t raw_axis =
      args.node.attrs.has("axis") ? args.node.attrs.get_int("axis") : (old ? 1 : -1);
  const int64_t axis = normalize_axis(raw_axis, rank);
  if (axis < 0)
    return invalid_argument(args.node.describe() + ": axis " + std::to_string(raw_axis) + " is out of range");
  int64_t outer = 1, n = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (d < axis) outer *= in[d];
    else if (d == axis || old) n *= in[d];
    else inner *= in[d];
  }
  const float* s = src.data<float>();
  float* o = args.dst[0]->data<float>();
  const int64_t lines = outer * inner;
#pragma omp parallel for schedule(static) if (lines * n > kParallelThreshold)
  for (int64_t line = 0; line < lines; ++line) {
    const int64_t base = (line / inner) * n * inner + line % inner;
    float max = -INFINITY;
    for (int64_t i = 0; i < n; ++i) max = std::max(max, s[base + i * inner]);
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) {
      const float e = std::exp(s[base + i * inner] - max);
      sum += e;
      if (!log) o[base + i * inner] = e;
    }
    if (log) {
      const float log_sum = static_cast<float>(std::log(sum));
      for (int64_t i = 0; i < n; ++i) o[base + i * inner] = s[base + i * inner] - max - log_sum;
    } else {
      const float inv = static_cast<float>(1.0 / sum);
      for (int64_t i = 0; i < n; ++i) o[base + i * inner] *= inv;
    }
  }
  return Status::ok();
}

}  // namespace

const CpuKernel& cpu_kernel_ReduceMean() {
  static const CpuKernel k{.run = [](const KernelArgs& a) { return run_reduce(a, true); }};
  return k;
}
const CpuKernel& cpu_kernel_ReduceSum() {
  static const CpuKernel k{.run = [](const KernelArgs& a) { return run_reduce(a, false); }};
  return k;
}
const CpuKernel& cpu_kernel_Softmax() {
  static const CpuKernel k{.run = [](const KernelArgs& a) { return run_softmax(a, false); }};
  return k;
}
const CpuKernel& cpu_kernel_LogSoftmax() {
  static const CpuKernel k{.run = [](const KernelArgs& a) { return run_softmax(a, true); }};
  return k;
}

}  // namespace ucudnn::cpu
