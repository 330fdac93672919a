// Element types a tensor can hold, with their ONNX TensorProto codes and sizes.
//
// Compute kernels are float32; int64 carries shapes and indices; the others
// exist so Cast, Constant and initializers can be represented and rejected or
// converted with a clear message. float16 and bfloat16 (runtime/core/half.h) are
// storage only: a half-precision model's inputs and outputs keep them, and the
// importer widens everything between to float32 (Note [half-precision models]).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "runtime/core/half.h"

namespace ucudnn {

// name, C++ type, ONNX TensorProto::DataType code
#define UCUDNN_FOR_EACH_DTYPE(X) \
  X(Float32, float, 1)           \
  X(UInt8, uint8_t, 2)           \
  X(Int8, int8_t, 3)             \
  X(Int32, int32_t, 6)           \
  X(Int64, int64_t, 7)           \
  X(Bool, bool, 9)               \
  X(Float64, double, 11)         \
  X(Float16, Float16, 10)        \
  X(BFloat16, BFloat16, 16)

enum class DType : int {
  kUndefined = 0,
#define UCUDNN_DTYPE_ENUM(name, type, code) k##name,
  UCUDNN_FOR_EACH_DTYPE(UCUDNN_DTYPE_ENUM)
#undef UCUDNN_DTYPE_ENUM
};

// Bytes per element; 0 for kUndefined.
size_t dtype_size(DType dtype);
// "float32", "int64", ...
const char* dtype_name(DType dtype);
// ONNX TensorProto data type code <-> DType. Unknown codes map to kUndefined.
DType dtype_from_onnx(int onnx_code);
int dtype_to_onnx(DType dtype);
// Name of an ONNX data type code, including ones we do not support ("float16").
std::string onnx_dtype_name(int onnx_code);

template <typename T> constexpr DType dtype_of();
#define UCUDNN_DTYPE_OF(name, type, code) \
  template <> constexpr DType dtype_of<type>() { return DType::k##name; }
UCUDNN_FOR_EACH_DTYPE(UCUDNN_DTYPE_OF)
#undef UCUDNN_DTYPE_OF

}  // namespace ucudnn
