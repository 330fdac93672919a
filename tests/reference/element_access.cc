// Element access of the naive references (element_access.h).
#include "tests/reference/element_access.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#include "tests/reference/elementwise_reference.h"

namespace ucudnn::reference {

int64_t ravel(const Index& index, const Shape& shape) {
  int64_t flat = 0;
  for (size_t d = 0; d < shape.size(); ++d) flat = flat * shape[d] + index[d];
  return flat;
}

Tensor make(DType dtype, const Shape& shape) { return std::move(Tensor::allocate(dtype, shape)).value(); }

double get(const Tensor& t, int64_t i) { return element_as_double(t, i); }

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
    default: break;
  }
}

void put(Tensor& t, int64_t i, double v) {
  switch (t.dtype()) {
    case DType::kFloat32: t.data<float>()[i] = static_cast<float>(v); break;
    case DType::kFloat64: t.data<double>()[i] = v; break;
    case DType::kBool: t.data<bool>()[i] = v != 0; break;
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
