// CPU kernels of Flatten, Reshape, Squeeze, Unsqueeze, Identity, Dropout
// (inference: a copy, mask all true), Constant, Shape, Size, Cast, and Range and EyeLike (their values
// from runtime/ops/generators.h).
//
// The shape-only ops copy bytes (any dtype); when the executor gives dst the
// same buffer as src the copy is skipped. Cast converts between float32,
// float64, float16, bfloat16, int32, int64, int8, uint8 and bool: float → integer
// truncates toward zero and saturates at the target's range (NaN → 0), anything →
// bool is `!= 0`, integer narrowing wraps (as numpy's astype does). A half source
// is widened to float32 exactly and then converted as a float32; a half target
// rounds once, to nearest even (runtime/core/half.h).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "runtime/cpu/cpu_kernel.h"
#include "runtime/ops/generators.h"

namespace ucudnn::cpu {

namespace {

constexpr int64_t kParallelThreshold = 16384;

Status copy_src_to_dst(const KernelArgs& args) {
  const Tensor& src = *args.src[0];
  Tensor& dst = *args.dst[0];
  if (dst.nbytes() != src.nbytes())
    return internal_error(args.node.describe() + ": output " + dst.describe() + " and input " + src.describe() +
                          " differ in size");
  if (dst.raw() != src.raw() && src.nbytes() > 0) std::memcpy(dst.raw(), src.raw(), src.nbytes());
  return Status::ok();
}

Status run_dropout(const KernelArgs& args) {
  UCUDNN_RETURN_IF_ERROR(copy_src_to_dst(args));
  if (args.dst.size() > 1 && args.dst[1] != nullptr) {
    bool* mask = args.dst[1]->data<bool>();
    std::fill(mask, mask + args.dst[1]->numel(), true);
  }
  return Status::ok();
}

Status run_constant(const KernelArgs& args) {
  const Tensor& value = args.node.attrs.get_tensor("value");
  Tensor& dst = *args.dst[0];
  if (dst.nbytes() != value.nbytes())
    return internal_error(args.node.describe() + ": output " + dst.describe() + " does not match value " +
                          value.describe());
  if (value.nbytes() > 0) std::memcpy(dst.raw(), value.raw(), value.nbytes());
  return Status::ok();
}

Status run_shape(const KernelArgs& args) {
  const Shape& shape = args.src[0]->shape();
  const int64_t rank = static_cast<int64_t>(shape.size());
  auto clamp_dim = [rank](int64_t v) { return std::clamp(v < 0 ? v + rank : v, int64_t{0}, rank); };
  const int64_t start = clamp_dim(args.node.attrs.get_int("start"));
  const int64_t end = args.node.attrs.has("end") ? clamp_dim(args.node.attrs.get_int("end")) : rank;
  int64_t* dst = args.dst[0]->data<int64_t>();
  for (int64_t d = start; d < end; ++d) dst[d - start] = shape[d];
  return Status::ok();
}

Status run_size(const KernelArgs& args) {
  args.dst[0]->data<int64_t>()[0] = args.src[0]->numel();
  return Status::ok();
}

template <typename T>
constexpr bool is_half_v = std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;

template <typename D, typename S>
D convert(S x) {
  if constexpr (is_half_v<S>) {
    return convert<D, float>(static_cast<float>(x));  // exact, so the float32 rules below are the half's
  } else if constexpr (std::is_same_v<D, bool>) {
    return x != S(0);
  } else if constexpr (std::is_floating_point_v<S> && std::is_integral_v<D>) {
    if (std::isnan(x)) return D(0);
    const S t = std::trunc(x);
    if (t <= static_cast<S>(std::numeric_limits<D>::lowest())) return std::numeric_limits<D>::lowest();
    if (t >= static_cast<S>(std::numeric_limits<D>::max())) return std::numeric_limits<D>::max();
    return static_cast<D>(t);
  } else {
    return static_cast<D>(x);
  }
}

template <typename D, typename S>
void cast_loop(const Tensor& src, Tensor& dst) {
  const S* s = src.data<S>();
  D* d = dst.data<D>();
  const int64_t n = src.numel();
#pragma omp parallel for schedule(static) if (n > kParallelThreshold)
  for (int64_t i = 0; i < n; ++i) d[i] = convert<D, S>(s[i]);
}

template <typename S>
Status cast_from(const KernelArgs& args) {
  const Tensor& src = *args.src[0];
  Tensor& dst = *args.dst[0];
  switch (dst.dtype()) {
#define UCUDNN_CAST_TO(name, type, code) \
  case DType::k##name: cast_loop<type, S>(src, dst); break;
    UCUDNN_FOR_EACH_DTYPE(UCUDNN_CAST_TO)
#undef UCUDNN_CAST_TO
    default:
      return unsupported(args.node.describe() + ": Cast to " + dtype_name(dst.dtype()) + " is not supported");
  }
  return Status::ok();
}

Status run_cast(const KernelArgs& args) {
  switch (args.src[0]->dtype()) {
#define UCUDNN_CAST_FROM(name, type, code) \
  case DType::k##name: return cast_from<type>(args);
    UCUDNN_FOR_EACH_DTYPE(UCUDNN_CAST_FROM)
#undef UCUDNN_CAST_FROM
    default:
      return unsupported(args.node.describe() + ": Cast from " + dtype_name(args.src[0]->dtype()) +
                         " is not supported");
  }
}

}  // namespace

const CpuKernel& cpu_kernel_Flatten() {
  static const CpuKernel k{.run = copy_src_to_dst};
  return k;
}
const CpuKernel& cpu_kernel_Reshape() {
  static const CpuKernel k{.run = copy_src_to_dst};
  return k;
}
const CpuKernel& cpu_kernel_Squeeze() {
  static const CpuKernel k{.run = copy_src_to_dst};
  return k;
}
const CpuKernel& cpu_kernel_Unsqueeze() {
  static const CpuKernel k{.run = copy_src_to_dst};
  return k;
}
const CpuKernel& cpu_kernel_Identity() {
  static const CpuKernel k{.run = copy_src_to_dst};
  return k;
}
const CpuKernel& cpu_kernel_Dropout() {
  static const CpuKernel k{.run = run_dropout};
  return k;
}
const CpuKernel& cpu_kernel_Constant() {
  static const CpuKernel k{.run = run_constant};
  return k;
}
const CpuKernel& cpu_kernel_Shape() {
  static const CpuKernel k{.run = run_shape};
  return k;
}
const CpuKernel& cpu_kernel_Size() {
  static const CpuKernel k{.run = run_size};
  return k;
}
const CpuKernel& cpu_kernel_Cast() {
  static const CpuKernel k{.run = run_cast};
  return k;
}

namespace {
// Copies values computed whole (generators.h) into dst[0], which the shape rule sized alike.
Status write_values(const KernelArgs& args, const Tensor& values) {
  Tensor& dst = *args.dst[0];
  if (values.dtype() != dst.dtype() || values.shape() != dst.shape())
    return internal_error(args.node.describe() + ": computed " + values.describe() + " for " + dst.describe());
  if (values.nbytes() > 0) std::memcpy(dst.raw(), values.raw(), values.nbytes());
  return Status::ok();
}
}  // namespace

const CpuKernel& cpu_kernel_Range() {
  static const CpuKernel k{.run = [](const KernelArgs& a) -> Status {
    UCUDNN_ASSIGN_OR_RETURN(Tensor values, range_values(*a.src[0], *a.src[1], *a.src[2], a.node.describe()));
    return write_values(a, values);
  }};
  return k;
}
const CpuKernel& cpu_kernel_EyeLike() {
  static const CpuKernel k{.run = [](const KernelArgs& a) -> Status {
    UCUDNN_ASSIGN_OR_RETURN(Tensor values,
                            eye_like_values(a.src[0]->shape(), a.dst[0]->dtype(), a.node.attrs.get_int("k")));
    return write_values(a, values);
  }};
  return k;
}

}  // namespace ucudnn::cpu
