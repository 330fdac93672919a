// Tensor allocation, views and conversions.
#include "runtime/core/tensor.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "runtime/core/bytes.h"

namespace ucudnn {

namespace {

constexpr size_t kAlignment = 64;

// "4611686018427387904 x 3 x 8 x 8 elements x 4 bytes = 8.86e+20 bytes": the size that does not fit,
// computed in long double so that it can be shown.
std::string size_that_overflows(DType dtype, const Shape& shape) {
  std::string factors;
  long double bytes = static_cast<long double>(dtype_size(dtype));
  for (int64_t d : shape) {
    factors += (factors.empty() ? "" : " x ") + std::to_string(d);
    if (d != 0) bytes *= static_cast<long double>(d);
  }
  char total[48];
  std::snprintf(total, sizeof total, "%.3Lg", bytes);
  return (factors.empty() ? "1" : factors) + " elements x " + std::to_string(dtype_size(dtype)) + " bytes = " +
         total + " bytes";
}

}  // namespace

Expected<size_t> checked_nbytes(DType dtype, const Shape& shape, const std::string& what) {
  auto described = [&] { return what + " " + dtype_name(dtype) + shape_to_string(shape); };
  for (int64_t d : shape)
    if (d < 0) return invalid_argument(described() + " has a negative dimension");
  Shape nonzero_dims;  // the bound holds with every 0 counted as 1: see checked_numel
  for (int64_t d : shape) nonzero_dims.push_back(d == 0 ? 1 : d);
  int64_t nonzero = 0;
  size_t bytes = 0;
  if (!checked_numel(nonzero_dims, &nonzero) || !checked_mul(static_cast<size_t>(nonzero), dtype_size(dtype), &bytes) ||
      bytes > kMaxTensorBytes)
    return invalid_argument(described() + " is too large: " + size_that_overflows(dtype, shape) +
                            ", more than one tensor can address (" + std::to_string(kMaxTensorBytes) +
                            " bytes); use a smaller batch or input shape");
  const bool empty = std::find(shape.begin(), shape.end(), 0) != shape.end();
  return empty ? size_t{0} : bytes;
}

Expected<Tensor> Tensor::allocate_host(DType dtype, Shape shape, bool zero) {
  Tensor t = view(dtype, std::move(shape), nullptr);
  UCUDNN_ASSIGN_OR_RETURN(const size_t bytes, checked_nbytes(dtype, t.shape_, "tensor"));
  size_t rounded = 0;
  void* p = checked_align_up(bytes == 0 ? 1 : bytes, kAlignment, &rounded) ? std::aligned_alloc(kAlignment, rounded)
                                                                            : nullptr;
  if (p == nullptr)
    return out_of_memory("cannot allocate " + format_bytes(bytes) + " (" + std::to_string(bytes) +
                         " bytes) of host memory for tensor " + t.describe());
  if (zero) std::memset(p, 0, rounded);
  t.holder_ = std::shared_ptr<void>(p, [](void* q) { std::free(q); });
  t.data_ = p;
  return t;
}

Expected<Tensor> Tensor::allocate(DType dtype, Shape shape) { return allocate_host(dtype, std::move(shape), true); }

Expected<Tensor> Tensor::allocate_uninitialized(DType dtype, Shape shape) {
  return allocate_host(dtype, std::move(shape), false);
}

Tensor Tensor::view(DType dtype, Shape shape, void* data) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.data_ = data;
  return t;
}

Tensor Tensor::from_floats(Shape shape, std::span<const float> values) {
  Tensor t = std::move(allocate(DType::kFloat32, std::move(shape))).value();
  if (!values.empty()) std::memcpy(t.data_, values.data(), std::min(values.size_bytes(), t.nbytes()));
  return t;
}

Tensor Tensor::from_int64s(Shape shape, std::span<const int64_t> values) {
  Tensor t = std::move(allocate(DType::kInt64, std::move(shape))).value();
  if (!values.empty()) std::memcpy(t.data_, values.data(), std::min(values.size_bytes(), t.nbytes()));
  return t;
}

Expected<Tensor> Tensor::clone() const {
  UCUDNN_ASSIGN_OR_RETURN(Tensor copy, allocate_uninitialized(dtype_, shape_));
  if (nbytes() > 0) std::memcpy(copy.data_, data_, nbytes());
  return copy;
}

Tensor Tensor::reshaped(Shape shape) const {
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

Expected<std::vector<int64_t>> Tensor::to_int64_vector() const {
  const int64_t n = numel();
  std::vector<int64_t> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    switch (dtype_) {
      case DType::kInt64: out[i] = data<int64_t>()[i]; break;
      case DType::kInt32: out[i] = data<int32_t>()[i]; break;
      case DType::kInt8: out[i] = data<int8_t>()[i]; break;
      case DType::kUInt8: out[i] = data<uint8_t>()[i]; break;
      case DType::kBool: out[i] = data<bool>()[i] ? 1 : 0; break;
      default:
        return invalid_argument(std::string("expected an integer tensor, got ") + describe());
    }
  }
  return out;
}

namespace {

bool is_floating(DType d) {
  return d == DType::kFloat32 || d == DType::kFloat64 || d == DType::kFloat16 || d == DType::kBFloat16;
}

template <typename From, typename To>
void convert_elements(const Tensor& src, Tensor& dst) {
  const From* s = src.data<From>();
  To* d = dst.data<To>();
  for (int64_t i = 0; i < src.numel(); ++i) d[i] = static_cast<To>(s[i]);
}

template <typename From>
void convert_from(const Tensor& src, Tensor& dst) {
  switch (dst.dtype()) {
    case DType::kFloat32: convert_elements<From, float>(src, dst); break;
    case DType::kFloat64: convert_elements<From, double>(src, dst); break;
    case DType::kFloat16: convert_elements<From, Float16>(src, dst); break;
    case DType::kBFloat16: convert_elements<From, BFloat16>(src, dst); break;
    default: break;  // convert_floating checked both dtypes
  }
}

}  // namespace

Expected<Tensor> convert_floating(const Tensor& src, DType dtype) {
  if (!is_floating(src.dtype()) || !is_floating(dtype))
    return invalid_argument(std::string("cannot convert ") + src.describe() + " to " + dtype_name(dtype) +
                            ": both must be float32, float64, float16 or bfloat16");
  if (src.empty()) return invalid_argument("cannot convert " + src.describe() + ": it holds no data");
  UCUDNN_ASSIGN_OR_RETURN(Tensor dst, Tensor::allocate_uninitialized(dtype, src.shape()));
  switch (src.dtype()) {
    case DType::kFloat32: convert_from<float>(src, dst); break;
    case DType::kFloat64: convert_from<double>(src, dst); break;
    case DType::kFloat16: convert_from<Float16>(src, dst); break;
    case DType::kBFloat16: convert_from<BFloat16>(src, dst); break;
    default: break;
  }
  return dst;
}

std::string Tensor::describe() const { return std::string(dtype_name(dtype_)) + shape_to_string(shape_); }

}  // namespace ucudnn
