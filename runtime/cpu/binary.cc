// CPU kernels of Add, Sub, Mul, Div, Pow, Mod, Max, Min with numpy broadcasting (Pow: float32 only), and of the
// comparisons and logical ops (bool results, the same broadcasting), Where, IsNaN and IsInf
// (runtime/ops/logic.cc).
//
// Fast paths: equal shapes (one flat loop) and a scalar operand. Otherwise each
// operand gets strides aligned to the output's dims (0 where it broadcasts),
// neighbouring dims that both operands walk alike are merged (a Squeeze-Excite
// [N, C, H, W] · [N, C, 1, 1] becomes [N·C, H·W] · [N·C, 1]), and the output is
// walked row by row (a row = its last merged dim), rows split across threads,
// each row a plain loop where both operands are contiguous or fixed along it. Integer Div truncates toward zero (C++ and ONNX Runtime semantics);
// an integer division by zero is an InvalidArgument naming the node.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <functional>
#include <string>
#include <type_traits>

#include "runtime/cpu/cpu_kernel.h"
#include "runtime/ops/logic.h"

namespace ucudnn::cpu {

namespace {

constexpr int64_t kParallelThreshold = 16384;

// Element strides of `shape` seen as a tensor of rank `rank` broadcast to `out`.
std::vector<int64_t> broadcast_strides(const Shape& shape, const Shape& out) {
  const size_t rank = out.size();
  Shape aligned(rank, 1);
  std::copy(shape.begin(), shape.end(), aligned.end() - static_cast<int64_t>(shape.size()));
  std::vector<int64_t> dense = shape_strides(aligned);
  for (size_t d = 0; d < rank; ++d)
    if (aligned[d] == 1) dense[d] = 0;
  return dense;
}

// Merges dim d into d + 1 wherever, for both operands, a step along d is out[d + 1] steps
// along d + 1 (contiguous together, or both broadcast): fewer, longer rows.
void merge_dims(Shape* out, std::vector<int64_t>* sa, std::vector<int64_t>* sb) {
  Shape dims = {out->back()};
  std::vector<int64_t> a = {sa->back()}, b = {sb->back()};
  for (int64_t d = static_cast<int64_t>(out->size()) - 2; d >= 0; --d) {
    const int64_t size = (*out)[static_cast<size_t>(d)];
    const int64_t stride_a = (*sa)[static_cast<size_t>(d)], stride_b = (*sb)[static_cast<size_t>(d)];
    if (stride_a == a.back() * dims.back() && stride_b == b.back() * dims.back()) {
      dims.back() *= size;
    } else {
      dims.push_back(size);
      a.push_back(stride_a);
      b.push_back(stride_b);
    }
  }
  out->assign(dims.rbegin(), dims.rend());
  sa->assign(a.rbegin(), a.rend());
  sb->assign(b.rbegin(), b.rend());
}

// One row of `inner` outputs: the operands step by ia and ib (0 or 1 in the common cases,
// which get loops the compiler vectorises).
template <typename T, typename R, typename F>
void apply_row(const T* a, int64_t ia, const T* b, int64_t ib, R* c, int64_t inner, F f) {
  if (ia == 1 && ib == 0) {
    const T vb = *b;
    for (int64_t i = 0; i < inner; ++i) c[i] = f(a[i], vb);
  } else if (ia == 0 && ib == 1) {
    const T va = *a;
    for (int64_t i = 0; i < inner; ++i) c[i] = f(va, b[i]);
  } else if (ia == 1 && ib == 1) {
    for (int64_t i = 0; i < inner; ++i) c[i] = f(a[i], b[i]);
  } else {
    for (int64_t i = 0; i < inner; ++i) c[i] = f(a[i * ia], b[i * ib]);
  }
}

// c = f(a, b) broadcast; T the operands' element type, R the result's (bool for a comparison).
template <typename T, typename F, typename R = T>
void apply(const Tensor& a, const Tensor& b, Tensor& c, F f) {
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  R* pc = c.data<R>();
  const int64_t n = c.numel();
  if (a.shape() == b.shape()) {
#pragma omp parallel for schedule(static) if (n > kParallelThreshold)
    for (int64_t i = 0; i < n; ++i) pc[i] = f(pa[i], pb[i]);
    return;
  }
  if (b.numel() == 1 && a.numel() == n) {
    const T vb = pb[0];
#pragma omp parallel for schedule(static) if (n > kParallelThreshold)
    for (int64_t i = 0; i < n; ++i) pc[i] = f(pa[i], vb);
    return;
  }
  if (a.numel() == 1 && b.numel() == n) {
    const T va = pa[0];
#pragma omp parallel for schedule(static) if (n > kParallelThreshold)
    for (int64_t i = 0; i < n; ++i) pc[i] = f(va, pb[i]);
    return;
  }
  Shape out = c.shape();  // rank >= 1 here: rank-0 shapes took a fast path
  std::vector<int64_t> sa = broadcast_strides(a.shape(), out);
  std::vector<int64_t> sb = broadcast_strides(b.shape(), out);
  merge_dims(&out, &sa, &sb);
  const int64_t rank = static_cast<int64_t>(out.size());
  const int64_t inner = out[rank - 1];
  const int64_t rows = inner == 0 ? 0 : n / inner;
  const int64_t ia = sa[rank - 1], ib = sb[rank - 1];
#pragma omp parallel for schedule(static) if (n > kParallelThreshold)
  for (int64_t row = 0; row < rows; ++row) {
    int64_t oa = 0, ob = 0, rest = row;
    for (int64_t d = rank - 2; d >= 0; --d) {
      const int64_t i = rest % out[d];
      rest /= out[d];
      oa += i * sa[d];
      ob += i * sb[d];
    }
    apply_row(pa + oa, ia, pb + ob, ib, pc + row * inner, inner, f);
  }
}

template <typename T>
bool has_zero(const Tensor& t) {
  const T* p = t.data<T>();
  return std::find(p, p + t.numel(), T(0)) != p + t.numel();
}

// f(x, y) where integer overflow wraps (two's complement, as ONNX Runtime does): signed integers are
// computed as unsigned, whose overflow is defined (a signed one is undefined behaviour).
template <typename T, typename F>
T wrapping(T x, T y, F f) {
  if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(f(static_cast<U>(x), static_cast<U>(y)));
  } else {
    return static_cast<T>(f(x, y));
  }
}

// Mod: C's remainder (`fmod`: the dividend's sign; std::fmod for floats), else the divisor's sign
// (Python's %). A divisor of -1 gives 0 without computing INT_MIN % -1, which traps on x86.
template <typename T>
void run_mod(const Tensor& a, const Tensor& b, Tensor& c, bool fmod) {
  if constexpr (std::is_floating_point_v<T>) {
    apply<T>(a, b, c, [](T x, T y) { return std::fmod(x, y); });
  } else {
    apply<T>(a, b, c, [fmod](T x, T y) {
      const T r = y == T(-1) ? T(0) : static_cast<T>(x % y);
      return !fmod && r != 0 && ((r < 0) != (y < 0)) ? static_cast<T>(r + y) : r;
    });
  }
}

template <typename T>
bool is_nan(T x) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::isnan(x);
  } else {
    return false;
  }
}

template <typename T>
Status run_typed(OpKind op, const Tensor& a, const Tensor& b, Tensor& c, bool fmod = false) {
  switch (op) {
    case OpKind::kMod: run_mod<T>(a, b, c, fmod); break;
    case OpKind::kMax:  // a NaN operand gives NaN (as numpy's maximum and the GPU's)
      apply<T>(a, b, c, [](T x, T y) { return x > y || is_nan(x) ? x : y; });
      break;
    case OpKind::kMin:
      apply<T>(a, b, c, [](T x, T y) { return x < y || is_nan(x) ? x : y; });
      break;
    case OpKind::kAdd:
      apply<T>(a, b, c, [](T x, T y) { return wrapping(x, y, [](auto p, auto q) { return p + q; }); });
      break;
    case OpKind::kSub:
      apply<T>(a, b, c, [](T x, T y) { return wrapping(x, y, [](auto p, auto q) { return p - q; }); });
      break;
    case OpKind::kMul:
      apply<T>(a, b, c, [](T x, T y) { return wrapping(x, y, [](auto p, auto q) { return p * q; }); });
      break;
    case OpKind::kDiv:
      apply<T>(a, b, c, [](T x, T y) {
        if constexpr (std::is_integral_v<T>) {
          // INT_MIN / -1 traps on x86; wrap like the other integer ops instead.
          if (y == T(-1)) return static_cast<T>(std::make_unsigned_t<T>(0) - static_cast<std::make_unsigned_t<T>>(x));
        }
        return static_cast<T>(x / y);
      });
      break;
    case OpKind::kPow:
      if constexpr (std::is_floating_point_v<T>) {
        if (b.numel() == 1 && b.data<T>()[0] == T(2)) {  // a variance's square: pow(x, 2) is x · x, rounded once
          apply<T>(a, b, c, [](T x, T) { return x * x; });
        } else {
          apply<T>(a, b, c, [](T x, T y) { return std::pow(x, y); });
        }
        break;
      } else {
        return internal_error("Pow on integers (its shape rule refuses them)");
      }
    default: return internal_error(std::string("binary kernel called for ") + op_name(op));
  }
  return Status::ok();
}

Status run_binary(const KernelArgs& args) {
  const Tensor& a = *args.src[0];
  const Tensor& b = *args.src[1];
  Tensor& c = *args.dst[0];
  const OpKind op = args.node.op;
  const bool divides = op == OpKind::kDiv || op == OpKind::kMod;
  const bool fmod = op == OpKind::kMod && args.node.attrs.get_int("fmod") != 0;
  switch (a.dtype()) {
    case DType::kFloat32:
      UCUDNN_RETURN_IF_ERROR(run_typed<float>(op, a, b, c, fmod));
      return apply_fused_activation(args.node, c);  // Add → Relu fused by optimizer/passes
    case DType::kInt64:
      if (divides && has_zero<int64_t>(b))
        return invalid_argument(args.node.describe() + ": integer division by zero (divisor " + b.describe() + ")");
      return run_typed<int64_t>(op, a, b, c, fmod);
    case DType::kInt32:
      if (divides && has_zero<int32_t>(b))
        return invalid_argument(args.node.describe() + ": integer division by zero (divisor " + b.describe() + ")");
      return run_typed<int32_t>(op, a, b, c, fmod);
    default:
      return unsupported(args.node.describe() + ": dtype " + dtype_name(a.dtype()) + " is not supported");
  }
}

// Equal, Less, Greater, LessOrEqual, GreaterOrEqual → bool.
template <typename T>
Status run_compare_typed(OpKind op, const Tensor& a, const Tensor& b, Tensor& c) {
  switch (op) {
    case OpKind::kEqual: apply<T, std::equal_to<T>, bool>(a, b, c, {}); break;
    case OpKind::kLess: apply<T, std::less<T>, bool>(a, b, c, {}); break;
    case OpKind::kGreater: apply<T, std::greater<T>, bool>(a, b, c, {}); break;
    case OpKind::kLessOrEqual: apply<T, std::less_equal<T>, bool>(a, b, c, {}); break;
    case OpKind::kGreaterOrEqual: apply<T, std::greater_equal<T>, bool>(a, b, c, {}); break;
    case OpKind::kAnd: apply<T, std::logical_and<T>, bool>(a, b, c, {}); break;
    case OpKind::kOr: apply<T, std::logical_or<T>, bool>(a, b, c, {}); break;
    case OpKind::kXor: apply<T, std::not_equal_to<T>, bool>(a, b, c, {}); break;
    default: return internal_error(std::string("comparison kernel called for ") + op_name(op));
  }
  return Status::ok();
}

Status run_compare(const KernelArgs& args) {
  const Tensor& a = *args.src[0];
  const Tensor& b = *args.src[1];
  Tensor& c = *args.dst[0];
  switch (a.dtype()) {
    case DType::kFloat32: return run_compare_typed<float>(args.node.op, a, b, c);
    case DType::kInt64: return run_compare_typed<int64_t>(args.node.op, a, b, c);
    case DType::kInt32: return run_compare_typed<int32_t>(args.node.op, a, b, c);
    case DType::kBool: return run_compare_typed<bool>(args.node.op, a, b, c);
    default: return unsupported(args.node.describe() + ": dtype " + dtype_name(a.dtype()) + " is not supported");
  }
}

Status run_not(const KernelArgs& args) {
  const bool* x = args.src[0]->data<bool>();
  bool* y = args.dst[0]->data<bool>();
  const int64_t n = args.dst[0]->numel();
  for (int64_t i = 0; i < n; ++i) y[i] = !x[i];
  return Status::ok();
}

// Where(C, X, Y): each output element from X where C holds, else from Y, all three broadcast to the output;
// elements copied as bytes (any dtype). Index arithmetic per element: Where runs on masks and shape
// values, not on a network's large tensors.
Status run_where(const KernelArgs& args) {
  Tensor& out = *args.dst[0];
  const Shape& shape = out.shape();
  const size_t bytes = dtype_size(out.dtype());
  std::vector<int64_t> strides[3];
  for (int i = 0; i < 3; ++i) strides[i] = broadcast_strides(args.src[i]->shape(), shape);
  const bool* cond = args.src[0]->data<bool>();
  const auto* x = static_cast<const std::byte*>(args.src[1]->raw());
  const auto* y = static_cast<const std::byte*>(args.src[2]->raw());
  auto* o = static_cast<std::byte*>(out.raw());
  const int64_t n = out.numel(), rank = static_cast<int64_t>(shape.size());
#pragma omp parallel for schedule(static) if (n > kParallelThreshold)
  for (int64_t i = 0; i < n; ++i) {
    int64_t offset[3] = {0, 0, 0}, rest = i;
    for (int64_t d = rank - 1; d >= 0; --d) {
      const int64_t index = rest % shape[d];
      rest /= shape[d];
      for (int k = 0; k < 3; ++k) offset[k] += index * strides[k][d];
    }
    const std::byte* from = cond[offset[0]] ? x + offset[1] * bytes : y + offset[2] * bytes;
    std::memcpy(o + i * bytes, from, bytes);
  }
  return Status::ok();
}

}  // namespace

#define UCUDNN_COMPARE_KERNEL(name)                  \
  const CpuKernel& cpu_kernel_##name() {             \
    static const CpuKernel k{.run = run_compare};    \
    return k;                                        \
  }
UCUDNN_FOR_EACH_COMPARISON(UCUDNN_COMPARE_KERNEL)
#undef UCUDNN_COMPARE_KERNEL

const CpuKernel& cpu_kernel_Not() {
  static const CpuKernel k{.run = run_not};
  return k;
}

const CpuKernel& cpu_kernel_IsNaN() {
  static const CpuKernel k{.run = [](const KernelArgs& a) {
    const float* x = a.src[0]->data<float>();
    bool* y = a.dst[0]->data<bool>();
    for (int64_t i = 0; i < a.dst[0]->numel(); ++i) y[i] = std::isnan(x[i]);
    return Status::ok();
  }};
  return k;
}

const CpuKernel& cpu_kernel_IsInf() {
  static const CpuKernel k{.run = [](const KernelArgs& a) {
    const bool negative = a.node.attrs.get_int("detect_negative") != 0;
    const bool positive = a.node.attrs.get_int("detect_positive") != 0;
    const float* x = a.src[0]->data<float>();
    bool* y = a.dst[0]->data<bool>();
    for (int64_t i = 0; i < a.dst[0]->numel(); ++i) y[i] = std::isinf(x[i]) && (x[i] > 0 ? positive : negative);
    return Status::ok();
  }};
  return k;
}

const CpuKernel& cpu_kernel_Where() {
  static const CpuKernel k{.run = run_where};
  return k;
}

const CpuKernel& cpu_kernel_Mod() {
  static const CpuKernel k{.run = run_binary};
  return k;
}
// Max and Min of two operands: the importer lowers other counts into pairs (onnx_import/lowering/max_min.h); before
// that, constant folding finds them Unsupported and leaves them.
Status run_pair(const KernelArgs& args) {
  if (args.node.inputs.size() != 2)
    return unsupported(args.node.describe() + ": " + std::to_string(args.node.inputs.size()) +
                       " operands; the importer lowers Max and Min into pairs");
  return run_binary(args);
}

const CpuKernel& cpu_kernel_Max() {
  static const CpuKernel k{.run = run_pair};
  return k;
}
const CpuKernel& cpu_kernel_Min() {
  static const CpuKernel k{.run = run_pair};
  return k;
}
const CpuKernel& cpu_kernel_Add() {
  static const CpuKernel k{.run = run_binary};
  return k;
}
const CpuKernel& cpu_kernel_Sub() {
  static const CpuKernel k{.run = run_binary};
  return k;
}
const CpuKernel& cpu_kernel_Mul() {
  static const CpuKernel k{.run = run_binary};
  return k;
}
const CpuKernel& cpu_kernel_Div() {
  static const CpuKernel k{.run = run_binary};
  return k;
}
const CpuKernel& cpu_kernel_Pow() {
  static const CpuKernel k{.run = run_binary};
  return k;
}

}  // namespace ucudnn::cpu
