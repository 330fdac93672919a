// DType tables, generated from UCUDNN_FOR_EACH_DTYPE.
#include "runtime/core/dtype.h"

namespace ucudnn {

size_t dtype_size(DType dtype) {
  switch (dtype) {
#define X(name, type, code) case DType::k##name: return sizeof(type);
    UCUDNN_FOR_EACH_DTYPE(X)
#undef X
    case DType::kUndefined: return 0;
  }
  return 0;
}

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return "float32";
    case DType::kUInt8: return "uint8";
    case DType::kInt8: return "int8";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
    case DType::kBool: return "bool";
    case DType::kFloat64: return "float64";
    case DType::kFloat16: return "float16";
    case DType::kBFloat16: return "bfloat16";
    case DType::kUndefined: return "undefined";
  }
  return "undefined";
}

DType dtype_from_onnx(int onnx_code) {
  switch (onnx_code) {
#define X(name, type, code) case code: return DType::k##name;
    UCUDNN_FOR_EACH_DTYPE(X)
#undef X
    default: return DType::kUndefined;
  }
}

int dtype_to_onnx(DType dtype) {
  switch (dtype) {
#define X(name, type, code) case DType::k##name: return code;
    UCUDNN_FOR_EACH_DTYPE(X)
#undef X
    case DType::kUndefined: return 0;
  }
  return 0;
}

std::string onnx_dtype_name(int onnx_code) {
  static const char* names[] = {"undefined", "float32", "uint8",  "int8",     "uint16",    "int16",
                                "int32",     "int64",   "string", "bool",     "float16",   "float64",
                                "uint32",    "uint64",  "complex64", "complex128", "bfloat16"};
  if (onnx_code >= 0 && onnx_code < static_cast<int>(sizeof(names) / sizeof(names[0])))
    return names[onnx_code];
  return "onnx type " + std::to_string(onnx_code);
}

}  // namespace ucudnn
