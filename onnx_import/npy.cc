// NumPy .npy reader: magic "\x93NUMPY", version byte pair, header length
// (2 bytes in version 1, 4 bytes in versions 2 and 3), then a Python dict
// literal {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } padded
// with spaces, then the data. Reads little-endian float32, float64, float16,
// int64, int32 (and the one-byte uint8, int8, bool) in C order; anything else is
// Unsupported, a malformed file InvalidArgument. NumPy has no bfloat16 (ml_dtypes'
// bfloat16 arrays are saved as 2-byte voids, '|V2'): those are refused with a
// pointer to the TensorProto (.pb) files, which hold bfloat16.
#include <cstring>

#include "onnx_import/internal.h"

namespace ucudnn::onnx_import {

namespace {

// The text after `key` and its colon in the header dict, or npos.
size_t find_value(const std::string& header, const char* key) {
  for (const char quote : {'\'', '"'}) {
    const std::string quoted = std::string(1, quote) + key + quote;
    size_t pos = header.find(quoted);
    if (pos == std::string::npos) continue;
    pos = header.find(':', pos + quoted.size());
    if (pos == std::string::npos) return pos;
    pos = header.find_first_not_of(" \t", pos + 1);
    return pos;
  }
  return std::string::npos;
}

bool parse_descr(const std::string& header, std::string* descr) {
  const size_t pos = find_value(header, "descr");
  if (pos == std::string::npos || (header[pos] != '\'' && header[pos] != '"')) return false;
  const size_t end = header.find(header[pos], pos + 1);
  if (end == std::string::npos) return false;
  *descr = header.substr(pos + 1, end - pos - 1);
  return true;
}

bool parse_shape(const std::string& header, Shape* shape) {
  size_t pos = find_value(header, "shape");
  if (pos == std::string::npos || header[pos] != '(') return false;
  const size_t end = header.find(')', pos);
  if (end == std::string::npos) return false;
  const std::string body = header.substr(pos + 1, end - pos - 1);
  size_t i = 0;
  while (i < body.size()) {
    if (body[i] == ' ' || body[i] == ',') {
      ++i;
      continue;
    }
    if (body[i] < '0' || body[i] > '9') return false;
    int64_t d = 0;
    while (i < body.size() && body[i] >= '0' && body[i] <= '9') {
      if (d > (int64_t{1} << 40)) return false;
      d = d * 10 + (body[i++] - '0');
    }
    if (i < body.size() && body[i] == 'L') ++i;  // Python 2 longs
    shape->push_back(d);
  }
  return true;
}

}  // namespace

Expected<Tensor> parse_npy(const std::string& bytes, const std::string& path) {
  const std::string what = "NumPy file '" + path + "'";
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0)
    return invalid_argument(what + " has no .npy header");
  const auto major = static_cast<unsigned char>(bytes[6]);
  size_t header_len = 0, header_start = 0;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<size_t>(static_cast<unsigned char>(bytes[9])) << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return invalid_argument(what + " is truncated");
    for (int i = 3; i >= 0; --i) header_len = (header_len << 8) | static_cast<unsigned char>(bytes[8 + i]);
    header_start = 12;
  } else {
    return unsupported(what + " has .npy format version " + std::to_string(major) + "; ucudnn reads 1 to 3");
  }
  if (header_start + header_len > bytes.size()) return invalid_argument(what + " is truncated in its header");
  const std::string header = bytes.substr(header_start, header_len);

  std::string descr;
  Shape shape;
  if (!parse_descr(header, &descr) || !parse_shape(header, &shape))
    return invalid_argument(what + " has a header ucudnn cannot read: " + header);
  const size_t fortran = find_value(header, "fortran_order");
  if (fortran == std::string::npos) return invalid_argument(what + " has no fortran_order in its header");
  if (header.compare(fortran, 4, "True") == 0)
    return unsupported(what + " is in Fortran order; save it C-ordered (np.ascontiguousarray)");

  if (descr.size() >= 2 && descr[0] == '>' && descr.substr(1) != "u1" && descr.substr(1) != "i1" &&
      descr.substr(1) != "b1")
    return unsupported(what + " is big-endian ('" + descr + "'); ucudnn reads little-endian .npy files");
  const std::string kind = descr.size() >= 2 && (descr[0] == '<' || descr[0] == '|' || descr[0] == '=' ||
                                                 descr[0] == '>')
                               ? descr.substr(1)
                               : descr;
  DType dtype = DType::kUndefined;
  if (kind == "f4") dtype = DType::kFloat32;
  else if (kind == "f8") dtype = DType::kFloat64;
  else if (kind == "f2") dtype = DType::kFloat16;
  else if (kind == "i8") dtype = DType::kInt64;
  else if (kind == "i4") dtype = DType::kInt32;
  else if (kind == "u1") dtype = DType::kUInt8;
  else if (kind == "i1") dtype = DType::kInt8;
  else if (kind == "b1") dtype = DType::kBool;
  if (kind == "V2")
    return unsupported(what + " has dtype '" + descr + "' (2-byte records, as NumPy saves bfloat16 arrays); NumPy " +
                       "has no bfloat16 type: write bfloat16 tensors as ONNX TensorProto files (.pb)");
  if (dtype == DType::kUndefined)
    return unsupported(what + " has dtype '" + descr +
                       "'; ucudnn reads float32, float64, float16, int64, int32, int8, uint8 and bool (bfloat16: " +
                       "use an ONNX TensorProto file, .pb)");

  int64_t numel = 1;
  for (int64_t d : shape) {
    if (d != 0 && numel > (int64_t{1} << 40) / d) return invalid_argument(what + " has an impossibly large shape");
    numel *= d;
  }
  const size_t data_bytes = static_cast<size_t>(numel) * dtype_size(dtype);
  const size_t data_start = header_start + header_len;
  if (bytes.size() - data_start != data_bytes)
    return invalid_argument(what + " holds " + std::to_string(bytes.size() - data_start) + " data bytes; " +
                            dtype_name(dtype) + shape_to_string(shape) + " needs " + std::to_string(data_bytes));
  UCUDNN_ASSIGN_OR_RETURN(Tensor tensor, Tensor::allocate(dtype, shape));
  if (data_bytes) std::memcpy(tensor.raw(), bytes.data() + data_start, data_bytes);
  if (dtype == DType::kBool) {
    uint8_t* p = tensor.data<uint8_t>();
    for (int64_t i = 0; i < numel; ++i) p[i] = p[i] ? 1 : 0;
  }
  return tensor;
}

}  // namespace ucudnn::onnx_import
