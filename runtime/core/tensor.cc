// Tensor allocation, views and conversions.
#include "runtime/core/tensor.h"

#include <cstdlib>
#include <cstring>
#include <new>

namespace ucudnn {

namespace {
constexpr size_t kAlignment = 64;
}

Expected<Tensor> Tensor::allocate(DType dtype, Shape shape) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  for (int64_t d : t.shape_)
    if (d < 0) return invalid_argument("negative dimension in shape " + shape_to_string(t.shape_));
  const size_t bytes = t.nbytes();
  const size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  void* p = std::aligned_alloc(kAlignment, rounded == 0 ? kAlignment : rounded);
  if (p == nullptr)
    return out_of_memory("cannot allocate " + std::to_string(bytes) + " bytes for tensor " +
                         std::string(dtype_name(dtype)) + shape_to_string(t.shape_));
  std::memset(p, 0, rounded == 0 ? kAlignment : rounded);
  t.holder_ = std::shared_ptr<void>(p, [](void* q) { std::free(q); });
  t.data_ = p;
  return t;
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
  UCUDNN_ASSIGN_OR_RETURN(Tensor copy, allocate(dtype_, shape_));
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

std::string Tensor::describe() const { return std::string(dtype_name(dtype_)) + shape_to_string(shape_); }

}  // namespace ucudnn
