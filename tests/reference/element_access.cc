// Element access of the naive references (element_access.h).
#include "tests/reference/element_access.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#include "tests/reference/elementwise_reference.h"

namespace ucudnn::reference {

namespace {

// The layout of a half type: explicit mantissa bits, exponent bits, the exponent bias.
struct HalfFormat {
  int mantissa_bits, exponent_bits, bias;
};

HalfFormat half_format(DType dtype) { return dtype == DType::kFloat16 ? HalfFormat{10, 5, 15} : HalfFormat{7, 8, 127}; }

bool is_half_dtype(DType d) { return d == DType::kFloat16 || d == DType::kBFloat16; }

uint16_t stored_bits(const Tensor& t, int64_t i) {
  uint16_t bits;
  std::memcpy(&bits, static_cast<const char*>(t.raw()) + 2 * i, 2);
  return bits;
}

void store_bits(Tensor& t, int64_t i, uint16_t bits) { std::memcpy(static_cast<char*>(t.raw()) + 2 * i, &bits, 2); }

}  // namespace

double half_value(DType dtype, uint16_t bits) {
  const HalfFormat f = half_format(dtype);
  const int exponent = (bits >> f.mantissa_bits) & ((1 << f.exponent_bits) - 1);
  const int mantissa = bits & ((1 << f.mantissa_bits) - 1);
  double magnitude;
  if (exponent == (1 << f.exponent_bits) - 1) magnitude = mantissa ? NAN : INFINITY;
  else if (exponent == 0) magnitude = std::ldexp(mantissa, 1 - f.bias - f.mantissa_bits);  // subnormal
  else magnitude = std::ldexp(mantissa + (1 << f.mantissa_bits), exponent - f.bias - f.mantissa_bits);
  return (bits & 0x8000) ? -magnitude : magnitude;
}

double round_to_half(DType dtype, double v) {
  if (std::isnan(v) || std::isinf(v) || v == 0) return v;
  const HalfFormat f = half_format(dtype);
  int e;
  std::frexp(v, &e);  // 2^(e-1) <= |v| < 2^e
  const int exponent = std::max(e - 1, 1 - f.bias);  // subnormals share the smallest normal's step
  const double step = std::ldexp(1.0, exponent - f.mantissa_bits);
  const double rounded = std::nearbyint(v / step) * step;  // the default rounding mode: to nearest even
  const double largest = std::ldexp(2.0 - std::ldexp(1.0, -f.mantissa_bits), (1 << f.exponent_bits) - 2 - f.bias);
  return std::abs(rounded) > largest ? std::copysign(INFINITY, v) : rounded;
}

uint16_t half_bits(DType dtype, double v) {
  const HalfFormat f = half_format(dtype);
  const uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  const uint16_t all_ones = static_cast<uint16_t>(((1 << f.exponent_bits) - 1) << f.mantissa_bits);
  if (std::isnan(v)) return static_cast<uint16_t>(sign | all_ones | (1 << (f.mantissa_bits - 1)));
  if (std::isinf(v)) return static_cast<uint16_t>(sign | all_ones);
  const double a = std::abs(v);
  if (a == 0) return sign;
  int e;
  std::frexp(a, &e);
  const int exponent = e - 1;
  if (exponent < 1 - f.bias)  // subnormal: a whole number of the smallest steps
    return static_cast<uint16_t>(sign | static_cast<int>(std::ldexp(a, f.bias - 1 + f.mantissa_bits)));
  const int mantissa = static_cast<int>(std::ldexp(a, f.mantissa_bits - exponent)) - (1 << f.mantissa_bits);
  return static_cast<uint16_t>(sign | ((exponent + f.bias) << f.mantissa_bits) | mantissa);
}

int64_t ravel(const Index& index, const Shape& shape) {
  int64_t flat = 0;
  for (size_t d = 0; d < shape.size(); ++d) flat = flat * shape[d] + index[d];
  return flat;
}

Tensor make(DType dtype, const Shape& shape) { return std::move(Tensor::allocate(dtype, shape)).value(); }

double get(const Tensor& t, int64_t i) {
  return is_half_dtype(t.dtype()) ? half_value(t.dtype(), stored_bits(t, i)) : element_as_double(t, i);
}

int64_t get_int(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kInt32: return t.data<int32_t>()[i];
    case DType::kInt64: return t.data<int64_t>()[i];
    case DType::kInt8: return t.data<int8_t>()[i];
    case DType::kUInt8: return t.data<uint8_t>()[i];
    case DType::kBool: return t.data<bool>()[i] ? 1 : 0;
    default: return static_cast<int64_t>(get(t, i));
  }
}

bool is_integer(DType d) { return d == DType::kInt32 || d == DType::kInt64 || d == DType::kInt8 || d == DType::kUInt8; }

// Stores v in element i; integers wrap modulo 2^bits (C++20 conversion rules).
void put_int(Tensor& t, int64_t i, int64_t v) {
  switch (t.dtype()) {
    case DType::kInt32: t.data<int32_t>()[i] = static_cast<int32_t>(v); break;
    case DType::kInt64: t.data<int64_t>()[i] = v; break;
    case DType::kInt8: t.data<int8_t>()[i] = static_cast<int8_t>(v); break;
    case DType::kUInt8: t.data<uint8_t>()[i] = static_cast<uint8_t>(v); break;
    case DType::kBool: t.data<bool>()[i] = v != 0; break;
    case DType::kFloat32: t.data<float>()[i] = static_cast<float>(v); break;
    case DType::kFloat64: t.data<double>()[i] = static_cast<double>(v); break;
    case DType::kFloat16: case DType::kBFloat16:
      store_bits(t, i, half_bits(t.dtype(), round_to_half(t.dtype(), static_cast<double>(v))));
      break;
    default: break;
  }
}

void put(Tensor& t, int64_t i, double v) {
  switch (t.dtype()) {
    case DType::kFloat32: t.data<float>()[i] = static_cast<float>(v); break;
    case DType::kFloat64: t.data<double>()[i] = v; break;
    case DType::kBool: t.data<bool>()[i] = v != 0; break;
    case DType::kFloat16: case DType::kBFloat16: store_bits(t, i, half_bits(t.dtype(), round_to_half(t.dtype(), v))); break;
    default: put_int(t, i, static_cast<int64_t>(std::trunc(v))); break;
  }
}

void copy_element(const Tensor& src, int64_t si, Tensor& dst, int64_t di) {
  const size_t size = dtype_size(src.dtype());
  std::memcpy(static_cast<char*>(dst.raw()) + di * size, static_cast<const char*>(src.raw()) + si * size, size);
}

// Same data, new shape.
Tensor copy_as(const Tensor& src, const Shape& shape) {
  Tensor out = make(src.dtype(), shape);
  for (int64_t i = 0; i < src.numel(); ++i) copy_element(src, i, out, i);
  return out;
}

std::vector<int64_t> ints(const Tensor* t) {
  std::vector<int64_t> v;
  if (t == nullptr) return v;
  for (int64_t i = 0; i < t->numel(); ++i) v.push_back(get_int(*t, i));
  return v;
}

const Tensor* input(const std::vector<const Tensor*>& in, size_t i) { return i < in.size() ? in[i] : nullptr; }

int64_t positive_axis(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }

Shape broadcast_shape(const std::vector<const Tensor*>& operands) {
  size_t rank = 0;
  for (const Tensor* t : operands) rank = std::max(rank, t->shape().size());
  Shape out(rank, 1);
  for (const Tensor* t : operands)
    for (size_t d = 0; d < t->shape().size(); ++d) {
      const int64_t dim = t->shape()[d];
      int64_t& o = out[rank - t->shape().size() + d];
      if (dim != 1) o = dim;
    }
  return out;
}

int64_t broadcast_source(const Index& out_index, const Shape& shape) {
  const size_t offset = out_index.size() - shape.size();
  Index index(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) index[d] = shape[d] == 1 ? 0 : out_index[d + offset];
  return ravel(index, shape);
}

}  // namespace ucudnn::reference
