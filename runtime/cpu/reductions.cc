// CPU kernels of the Reduce* family, ArgMax, ArgMin, Softmax and LogSoftmax (float32).
//
// Reduce*: each output element (threads split the outputs) reduces its sub-box, walking the reduced
// dims with an odometer; the kept dims give the base offset. Where a sum or mean reduces the
// innermost dims (a mean over H and W, over a last axis) the sub-box is contiguous and
// sum_in_float_runs sums it.
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
#include "runtime/ops/reductions.h"

namespace ucudnn::cpu {

namespace {

constexpr int64_t kParallelThreshold = 16384;

// Every output of a Reduce* kind (runtime/ops/reduce_kind.h): sums in double, max and min in float.
Status run_reduce(const KernelArgs& args, ReduceKind kind) {
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
  // Kept dims, then reduced ones (false < true): output `out` reduces the count floats at out · count.
  const bool innermost = std::is_sorted(reduce.begin(), reduce.end());
  const bool plain_sum = kind == ReduceKind::kSum || kind == ReduceKind::kMean;
#pragma omp parallel if (outputs * count > kParallelThreshold)
  {
    std::vector<int64_t> index(static_cast<size_t>(nr));  // one odometer per thread
    // Calls f(x) for every element output `out` reduces.
    auto for_each_reduced = [&](int64_t out, auto&& f) {
      int64_t offset = 0, rest = out;
      for (int64_t d = nk - 1; d >= 0; --d) {
        offset += (rest % kept_dims[d]) * kept_strides[d];
        rest /= kept_dims[d];
      }
      std::fill(index.begin(), index.end(), 0);
      for (int64_t k = 0; k < count; ++k) {
        f(s[offset]);
        for (int64_t d = nr - 1; d >= 0; --d) {  // odometer step over the reduced dims
          offset += red_strides[d];
          if (++index[d] < red_dims[d]) break;
          offset -= red_strides[d] * red_dims[d];
          index[d] = 0;
        }
      }
    };
#pragma omp for schedule(static)
    for (int64_t out = 0; out < outputs; ++out) {
      if (plain_sum && innermost) {
        o[out] = finish_reduction(kind, sum_in_float_runs(s + out * count, count), count, 0.0f);
        continue;
      }
      float extreme = kind == ReduceKind::kMin ? INFINITY : -INFINITY;  // max, min, and LogSumExp's shift
      if (kind == ReduceKind::kMax || kind == ReduceKind::kLogSumExp)
        for_each_reduced(out, [&](float x) { extreme = x > extreme || x != x ? x : extreme; });
      if (kind == ReduceKind::kMin)
        for_each_reduced(out, [&](float x) { extreme = x < extreme || x != x ? x : extreme; });
      if (kind == ReduceKind::kMax || kind == ReduceKind::kMin || std::isnan(extreme)) {
        o[out] = extreme;
        continue;
      }
      double acc = kind == ReduceKind::kProd ? 1.0 : 0.0;
      switch (kind) {
        case ReduceKind::kProd: for_each_reduced(out, [&](float x) { acc *= x; }); break;
        case ReduceKind::kL1: for_each_reduced(out, [&](float x) { acc += std::fabs(x); }); break;
        case ReduceKind::kL2:
        case ReduceKind::kSumSquare: for_each_reduced(out, [&](float x) { acc += double{x} * x; }); break;
        case ReduceKind::kLogSumExp:
          if (std::isinf(extreme)) break;  // finish_reduction gives the infinite max itself
          for_each_reduced(out, [&](float x) { acc += std::exp(double{x} - extreme); });
          break;
        default: for_each_reduced(out, [&](float x) { acc += x; }); break;
      }
      o[out] = finish_reduction(kind, acc, count, extreme);
    }
  }
  return Status::ok();
}

// ArgMax/ArgMin: X viewed as [outer, n, inner] around the axis; each of the outer·inner lines gives the
// index of its first extreme (its last with select_last_index). A NaN counts as the extreme, as NumPy's.
Status run_arg_extreme(const KernelArgs& args, bool max) {
  const Tensor& src = *args.src[0];
  const Shape& in = src.shape();
  const int64_t raw_axis = args.node.attrs.get_int("axis");
  const int64_t axis = normalize_axis(raw_axis, src.rank());
  if (axis < 0)
    return invalid_argument(args.node.describe() + ": axis " + std::to_string(raw_axis) + " is out of range");
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < src.rank(); ++d) {
    if (d < axis) outer *= in[d];
    if (d > axis) inner *= in[d];
  }
  const int64_t n = in[axis];
  const bool last = args.node.attrs.get_int("select_last_index") != 0;
  const float* s = src.data<float>();
  int64_t* o = args.dst[0]->data<int64_t>();
  const int64_t lines = outer * inner;
#pragma omp parallel for schedule(static) if (lines * n > kParallelThreshold)
  for (int64_t line = 0; line < lines; ++line) {
    const float* x = s + (line / inner) * n * inner + line % inner;
    int64_t best = 0;
    for (int64_t i = 1; i < n && x[best * inner] == x[best * inner]; ++i) {
      const float v = x[i * inner], b = x[best * inner];
      const bool better = v != v || (max ? v > b : v < b) || (last && v == b);
      if (better) best = i;
    }
    o[line] = best;
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

#define UCUDNN_REDUCTION_KERNEL(name, kind)                                               \
  const CpuKernel& cpu_kernel_##name() {                                                  \
    static const CpuKernel k{.run = [](const KernelArgs& a) {                             \
      return run_reduce(a, ReduceKind::kind);                                             \
    }};                                                                                   \
    return k;                                                                             \
  }
UCUDNN_FOR_EACH_REDUCTION(UCUDNN_REDUCTION_KERNEL)
#undef UCUDNN_REDUCTION_KERNEL

const CpuKernel& cpu_kernel_ArgMax() {
  static const CpuKernel k{.run = [](const KernelArgs& a) { return run_arg_extreme(a, true); }};
  return k;
}
const CpuKernel& cpu_kernel_ArgMin() {
  static const CpuKernel k{.run = [](const KernelArgs& a) { return run_arg_extreme(a, false); }};
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
