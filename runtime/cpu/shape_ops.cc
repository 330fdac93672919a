// CPU kernels of Flatten, Reshape, Squeeze, Unsqueeze, Identity, Dropout
// (inference: a copy, mask all true), Constant, Shape, Size, Cast, and Range and EyeLike (their values
// from runtime/ops/generators.h).
//
// The shape-only ops copy bytes (any dtype); when the executor gives dst the
// same buffer as src the copy is skipped. Cast converts between float32,
// float64, int32, int64, int8, uint8 and bool: float → integer truncates toward
// zero and saturates at the target's range (NaN → 0), anything → bool is
// `!= 0`, integer narrowing wraps (as numpy's astype does).
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

template <typename D, typename S>
D convert(S x) {
  if constexpr (std::is_same_v<D, bool>) {
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
    case DType::kFloat32: cast_loop<float, S>(src, dst); break;
    case DType::kFloat64: cast_loop<double, S>(src, dst); break;
    case DType::kInt32: cast_loop<int32_t, S>(src, dst); break;
    case DType::kInt64: cast_loop<int64_t, S>(src, dst); break;
    case DType::kInt8: cast_loop<int8_t, S>(src, dst); break;
    case DType::kUInt8: cast_loop<uint8_t, S>(src, dst); break;
    case DType::kBool: cast_loop<bool, S>(src, dst); break;
    default:
      return unsupported(args.node.describe() + ": Cast to " + dtype_name(dst.dtype()) + " is not supported");
  }
  return Status::ok();
}

Status run_cast(const KernelArgs& args) {
  switch (args.src[0]->dtype()) {
    case DType::kFloat32: return cast_from<float>(args);
    case DType::kFloat64: return cast_from<double>(args);
    case DType::kInt32: return cast_from<int32_t>(args);
    case DType::kInt64: return cast_from<int64_t>(args);
    case DType::kInt8: return cast_from<int8_t>(args);
    case DType::kUInt8: return cast_from<uint8_t>(args);
    case DType::kBool: return cast_from<bool>(args);
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
