// Tensor: dtype + shape + a pointer to host memory, owning or borrowed.
//
// An owning tensor keeps its buffer alive through a shared holder (copies share
// the buffer). A borrowed tensor (Tensor::view) points into memory someone else
// owns, e.g. the executor's activation arena; it must not outlive that memory.
// Data is dense, row-major, 64-byte aligned when allocated here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "runtime/core/dtype.h"
#include "runtime/core/shape.h"
#include "runtime/core/status.h"

namespace ucudnn {

// The most bytes one tensor may take: every byte offset into it (and every element index,
// stride and partial product of its dims) then fits in int64 / ptrdiff_t, which the kernels'
// index arithmetic relies on. Far above any memory; the memory check refuses long before.
inline constexpr size_t kMaxTensorBytes = static_cast<size_t>(INT64_MAX);

// The bytes of a dense dtype[shape] tensor, or InvalidArgument naming `what` ("value 'x'"), the
// shape and its size when a dim is negative or the size passes kMaxTensorBytes (zero dims counted
// as 1, see checked_numel, so a 0 cannot hide an overflowing product).
Expected<size_t> checked_nbytes(DType dtype, const Shape& shape, const std::string& what);

class Tensor {
 public:
  Tensor() = default;

  // A new zero-filled host tensor. InvalidArgument for a shape checked_nbytes refuses;
  // kOutOfMemory when allocation fails.
  static Expected<Tensor> allocate(DType dtype, Shape shape);
  // The same without the zero fill, for a tensor that is overwritten at once (a copy, an
  // output): its pages are not touched before they are written.
  static Expected<Tensor> allocate_uninitialized(DType dtype, Shape shape);
  // A non-owning view of `data` (which must hold numel * dtype_size bytes).
  static Tensor view(DType dtype, Shape shape, void* data);
  // A new owning float32 / int64 tensor holding a copy of `values`. For small
  // tensors (scalars, shapes, test data): an allocation failure here terminates.
  static Tensor from_floats(Shape shape, std::span<const float> values);
  static Tensor from_int64s(Shape shape, std::span<const int64_t> values);

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t dim(int64_t i) const { return shape_[i]; }
  int64_t numel() const { return shape_numel(shape_); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype_); }
  bool empty() const { return data_ == nullptr && numel() != 0; }
  bool is_owning() const { return holder_ != nullptr; }

  void* raw() { return data_; }
  const void* raw() const { return data_; }
  template <typename T> T* data() { return static_cast<T*>(data_); }
  template <typename T> const T* data() const { return static_cast<const T*>(data_); }

  // A deep copy that owns its memory.
  Expected<Tensor> clone() const;
  // Same buffer, new shape of equal numel (no copy).
  Tensor reshaped(Shape shape) const;
  // Values converted to int64 (accepts int32/int64/uint8/int8/bool tensors); used for
  // shape-like inputs (Reshape's shape, Slice's starts, ...).
  Expected<std::vector<int64_t>> to_int64_vector() const;

  // "float32[1, 3, 224, 224]"
  std::string describe() const;

 private:
  static Expected<Tensor> allocate_host(DType dtype, Shape shape, bool zero);

  DType dtype_ = DType::kUndefined;
  Shape shape_;
  std::shared_ptr<void> holder_;
  void* data_ = nullptr;
};

// A new tensor holding `src`'s values as `dtype`, both among the floating dtypes (float32, float64,
// float16, bfloat16): exact when `dtype` holds every value of src's (float16 -> float32), else rounded
// to nearest even (runtime/core/half.h). InvalidArgument naming both for another dtype.
Expected<Tensor> convert_floating(const Tensor& src, DType dtype);

}  // namespace ucudnn
