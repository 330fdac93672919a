// Tensors in and out of files: ONNX TensorProto (raw_data, the typed repeated
// fields, external data next to the model) and NumPy .npy (version 1–3,
// little-endian, C order). All host data is little-endian (x86-64, aarch64),
// which is also ONNX's raw_data byte order, so bytes are copied as they are.
// float16 and bfloat16 tensors are raw_data or int32_data holding one 16-bit encoding
// per entry (runtime/core/half.h).
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include "onnx_import/internal.h"
#include "runtime/core/file_io.h"

namespace ucudnn::onnx_import {

static_assert(std::endian::native == std::endian::little, "tensor_io assumes a little-endian host");

namespace fs = std::filesystem;

namespace {

// Elements beyond this are certainly a corrupt header (2^40 floats = 4 TiB).
constexpr int64_t kMaxElements = int64_t{1} << 40;

Expected<std::string> read_whole_file(const std::string& path, const char* what) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) return not_found(std::string(what) + " '" + path + "' does not exist");
  if (!fs::is_regular_file(st)) return invalid_argument(std::string(what) + " '" + path + "' is not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return io_error("cannot open " + std::string(what) + " '" + path + "'");
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) return io_error("cannot read " + std::string(what) + " '" + path + "'");
  return buf.str();
}

// Where an external tensor's bytes live, from its external_data entries.
struct ExternalRef {
  std::string location;
  int64_t offset = 0;
  int64_t length = -1;  // -1: to the end of the file
  std::string file;     // the file, symbolic links resolved (check_external): inside the model's folder
};

// Note [model folders are untrusted]: an external data file must lie inside the model's folder once every
// symbolic link is followed — a `weights.bin` there that links elsewhere is refused like a `..` location
// (the class of CVE-2024-27318). Compared as canonical paths, component by component.
Expected<std::string> file_inside_folder(const std::string& base_dir, const std::string& location,
                                         const std::string& what) {
  std::error_code ec;
  const fs::path folder = fs::canonical(base_dir.empty() ? fs::path(".") : fs::path(base_dir), ec);
  if (ec) return not_found(what + ": the model's folder '" + base_dir + "' cannot be resolved (" + ec.message() + ")");
  const fs::path file = fs::canonical(folder / location, ec);
  if (ec)
    return not_found(what + ": external data file '" + (fs::path(base_dir) / location).string() +
                     "' cannot be read (" + ec.message() + ")");
  auto f = file.begin();
  for (auto d = folder.begin(); d != folder.end(); ++d, ++f)
    if (f == file.end() || *f != *d)
      return invalid_model(what + ": external data location '" + location + "' resolves to '" + file.string() +
                           "', outside the model's folder '" + folder.string() + "' (through a symbolic link)");
  return file.string();
}

Expected<ExternalRef> parse_external_ref(const onnx::TensorProto& proto, const std::string& what) {
  ExternalRef ref;
  for (const onnx::StringStringEntryProto& e : proto.external_data()) {
    try {
      if (e.key() == "location") ref.location = e.value();
      else if (e.key() == "offset") ref.offset = std::stoll(e.value());
      else if (e.key() == "length") ref.length = std::stoll(e.value());
      // "checksum" and unknown keys are ignored.
    } catch (const std::exception&) {
      return invalid_model(what + ": external_data '" + e.key() + "' is not a number: '" + e.value() + "'");
    }
  }
  if (ref.location.empty()) return invalid_model(what + ": external data without a 'location'");
  if (ref.offset < 0 || ref.length < -1) return invalid_model(what + ": negative external data offset or length");
  const fs::path loc(ref.location);
  if (loc.is_absolute()) return invalid_model(what + ": external data location '" + ref.location + "' is absolute");
  for (const fs::path& part : loc)
    if (part == "..")
      return invalid_model(what + ": external data location '" + ref.location + "' leaves the model's folder");
  return ref;
}

// Checks that the external data holds `expected_bytes` bytes; returns where they are.
Expected<ExternalRef> check_external(const onnx::TensorProto& proto, const std::string& base_dir,
                                     const std::string& what, size_t expected_bytes) {
  UCUDNN_ASSIGN_OR_RETURN(ExternalRef ref, parse_external_ref(proto, what));
  if (ref.length >= 0 && static_cast<size_t>(ref.length) != expected_bytes)
    return invalid_model(what + ": external data length " + std::to_string(ref.length) + " does not match " +
                         std::to_string(expected_bytes) + " bytes of its dtype and shape");
  UCUDNN_ASSIGN_OR_RETURN(ref.file, file_inside_folder(base_dir, ref.location, what));
  const std::string& file = ref.file;
  std::error_code ec;
  const auto size = fs::file_size(file, ec);
  if (ec) return not_found(what + ": external data file '" + file + "' cannot be read");
  if (static_cast<uint64_t>(ref.offset) + expected_bytes > size)
    return invalid_model(what + ": external data file '" + file + "' has " + std::to_string(size) +
                         " bytes; the tensor needs " + std::to_string(expected_bytes) + " bytes from offset " +
                         std::to_string(ref.offset));
  return ref;
}

// Reads `expected_bytes` bytes of external data into `dst`.
Status read_external(const onnx::TensorProto& proto, const std::string& base_dir, const std::string& what,
                     size_t expected_bytes, void* dst) {
  UCUDNN_ASSIGN_OR_RETURN(ExternalRef ref, check_external(proto, base_dir, what, expected_bytes));
  const std::string& file = ref.file;
  std::ifstream in(file, std::ios::binary);
  if (!in) return io_error(what + ": cannot open external data file '" + file + "'");
  in.seekg(ref.offset);
  in.read(static_cast<char*>(dst), static_cast<std::streamsize>(expected_bytes));
  if (!in) return io_error(what + ": reading external data file '" + file + "' failed");
  return Status::ok();
}

// float16 and bfloat16 values in int32_data are their 16-bit encodings, one per int32 (the ONNX spec:
// "bit-wise converted to an uint16_t"); the upper bits are dropped as ONNX Runtime does.
template <typename Half>
Status copy_half_bits(const google::protobuf::RepeatedField<int32_t>& field, int64_t count, const std::string& what,
                      Half* dst) {
  if (static_cast<int64_t>(field.size()) != count)
    return invalid_model(what + ": int32_data holds " + std::to_string(field.size()) + " values; its shape needs " +
                         std::to_string(count));
  for (int64_t i = 0; i < count; ++i) dst[i] = Half::from_bits(static_cast<uint16_t>(field.Get(static_cast<int>(i))));
  return Status::ok();
}

// Copies `count` values of a typed repeated field into `dst`, converting to T.
template <typename T, typename Field>
Status copy_field(const Field& field, int64_t count, const std::string& what, const char* field_name, T* dst) {
  if (static_cast<int64_t>(field.size()) != count)
    return invalid_model(what + ": " + field_name + " holds " + std::to_string(field.size()) +
                         " values; its shape needs " + std::to_string(count));
  for (int64_t i = 0; i < count; ++i) dst[i] = static_cast<T>(field.Get(static_cast<int>(i)));
  return Status::ok();
}

// The typed repeated field that holds `dtype`'s values when there is no raw_data, and its size.
std::pair<const char*, int> typed_field(const onnx::TensorProto& proto, DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return {"float_data", proto.float_data_size()};
    case DType::kFloat64: return {"double_data", proto.double_data_size()};
    case DType::kInt64: return {"int64_data", proto.int64_data_size()};
    default: return {"int32_data", proto.int32_data_size()};
  }
}

// The data's size against the shape, before anything is allocated: a few bytes of dims must not make
// the reader allocate (and zero) gigabytes. The copies below check each part again.
Status check_data_size(const onnx::TensorProto& proto, DType dtype, const Shape& shape,
                       const std::string& base_dir, const std::string& what) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;  // at most 2^40 (tensor_proto_shape)
  const size_t bytes = static_cast<size_t>(n) * dtype_size(dtype);
  if (proto.data_location() == onnx::TensorProto::EXTERNAL)
    return check_external(proto, base_dir, what, bytes).status();
  if (proto.has_raw_data()) {
    if (proto.raw_data().size() == bytes) return Status::ok();
    return invalid_model(what + ": raw_data has " + std::to_string(proto.raw_data().size()) + " bytes; " +
                         dtype_name(dtype) + shape_to_string(shape) + " needs " + std::to_string(bytes));
  }
  const auto [field_name, field_size] = typed_field(proto, dtype);
  if (field_size == n) return Status::ok();
  return invalid_model(what + ": " + field_name + " holds " + std::to_string(field_size) +
                       " values; its shape needs " + std::to_string(n));
}

}  // namespace

Expected<Shape> tensor_proto_shape(const onnx::TensorProto& proto, const std::string& what) {
  Shape shape;
  int64_t numel = 1;
  for (int64_t d : proto.dims()) {
    if (d < 0) return invalid_model(what + " has a negative dimension " + std::to_string(d));
    shape.push_back(d);
    if (d != 0 && numel > kMaxElements / d)
      return invalid_model(what + " has an impossibly large shape " + shape_to_string(shape));
    numel *= d;
  }
  return shape;
}

Expected<Tensor> tensor_from_proto(const onnx::TensorProto& proto, const std::string& base_dir,
                                   const std::string& what) {
  if (proto.data_type() == onnx::TensorProto::UNDEFINED) return invalid_model(what + " has no data type");
  const DType dtype = dtype_from_onnx(proto.data_type());
  if (dtype == DType::kUndefined)
    return unsupported(what + " has dtype " + onnx_dtype_name(proto.data_type()) +
                       "; ucudnn supports float32, float64, float16, bfloat16, int64, int32, int8, uint8 and bool");
  if (proto.has_segment()) return unsupported(what + " is a segmented TensorProto");
  UCUDNN_ASSIGN_OR_RETURN(Shape shape, tensor_proto_shape(proto, what));
  UCUDNN_RETURN_IF_ERROR(check_data_size(proto, dtype, shape, base_dir, what));
  UCUDNN_ASSIGN_OR_RETURN(Tensor tensor, Tensor::allocate(dtype, shape));
  const int64_t n = tensor.numel();
  const size_t bytes = tensor.nbytes();

  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    UCUDNN_RETURN_IF_ERROR(read_external(proto, base_dir, what, bytes, tensor.raw()));
  } else if (proto.has_raw_data()) {
    if (proto.raw_data().size() != bytes)
      return invalid_model(what + ": raw_data has " + std::to_string(proto.raw_data().size()) + " bytes; " +
                           tensor.describe() + " needs " + std::to_string(bytes));
    if (bytes) std::memcpy(tensor.raw(), proto.raw_data().data(), bytes);
  } else {
    switch (dtype) {
      case DType::kFloat32:
        UCUDNN_RETURN_IF_ERROR(copy_field(proto.float_data(), n, what, "float_data", tensor.data<float>()));
        break;
      case DType::kFloat64:
        UCUDNN_RETURN_IF_ERROR(copy_field(proto.double_data(), n, what, "double_data", tensor.data<double>()));
        break;
      case DType::kInt64:
        UCUDNN_RETURN_IF_ERROR(copy_field(proto.int64_data(), n, what, "int64_data", tensor.data<int64_t>()));
        break;
      case DType::kInt32:
        UCUDNN_RETURN_IF_ERROR(copy_field(proto.int32_data(), n, what, "int32_data", tensor.data<int32_t>()));
        break;
      case DType::kInt8:
        UCUDNN_RETURN_IF_ERROR(copy_field(proto.int32_data(), n, what, "int32_data", tensor.data<int8_t>()));
        break;
      case DType::kUInt8:
        UCUDNN_RETURN_IF_ERROR(copy_field(proto.int32_data(), n, what, "int32_data", tensor.data<uint8_t>()));
        break;
      case DType::kBool:
        UCUDNN_RETURN_IF_ERROR(copy_field(proto.int32_data(), n, what, "int32_data", tensor.data<uint8_t>()));
        break;
      case DType::kFloat16:
        UCUDNN_RETURN_IF_ERROR(copy_half_bits(proto.int32_data(), n, what, tensor.data<Float16>()));
        break;
      case DType::kBFloat16:
        UCUDNN_RETURN_IF_ERROR(copy_half_bits(proto.int32_data(), n, what, tensor.data<BFloat16>()));
        break;
      case DType::kUndefined:
        break;
    }
  }
  if (dtype == DType::kBool) {  // any non-zero byte is true; keep bools 0/1
    uint8_t* p = static_cast<uint8_t*>(tensor.raw());
    for (int64_t i = 0; i < n; ++i) p[i] = p[i] ? 1 : 0;
  }
  return tensor;
}

Tensor int64_vector_tensor(const std::vector<int64_t>& values) {
  Tensor t = std::move(Tensor::allocate(DType::kInt64, {static_cast<int64_t>(values.size())})).value();
  if (!values.empty()) std::memcpy(t.raw(), values.data(), values.size() * sizeof(int64_t));
  return t;
}

Tensor float_vector_tensor(const std::vector<float>& values) {
  Tensor t = std::move(Tensor::allocate(DType::kFloat32, {static_cast<int64_t>(values.size())})).value();
  if (!values.empty()) std::memcpy(t.raw(), values.data(), values.size() * sizeof(float));
  return t;
}

void tensor_to_proto(const Tensor& tensor, const std::string& name, onnx::TensorProto* proto) {
  proto->Clear();
  proto->set_name(name);
  proto->set_data_type(dtype_to_onnx(tensor.dtype()));
  for (int64_t d : tensor.shape()) proto->add_dims(d);
  proto->set_raw_data(tensor.raw(), tensor.nbytes());
}

Expected<Tensor> read_tensor_file(const std::string& path) {
  UCUDNN_ASSIGN_OR_RETURN(std::string bytes, read_whole_file(path, "tensor file"));
  if (bytes.size() >= 6 && std::memcmp(bytes.data(), "\x93NUMPY", 6) == 0) return parse_npy(bytes, path);
  if (bytes.empty()) return invalid_argument("tensor file '" + path + "' is empty");
  onnx::TensorProto proto;
  if (!proto.ParseFromString(bytes))
    return invalid_argument("tensor file '" + path + "' is neither a TensorProto (.pb) nor a NumPy file (.npy)");
  std::string dir = fs::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  auto tensor = tensor_from_proto(proto, dir, "tensor file '" + path + "'");
  if (!tensor && tensor.status().code() == StatusCode::kInvalidModel)  // a bad file here is bad input
    return Status(StatusCode::kInvalidArgument, tensor.status().message());
  return tensor;
}

Status write_tensor_pb(const std::string& path, const std::string& name, const Tensor& tensor) {
  if (tensor.dtype() == DType::kUndefined || (tensor.raw() == nullptr && tensor.numel() != 0))
    return invalid_argument("cannot write an empty tensor to '" + path + "'");
  onnx::TensorProto proto;
  tensor_to_proto(tensor, name, &proto);
  std::string bytes;
  if (!proto.SerializeToString(&bytes))
    return internal_error("cannot serialize tensor '" + name + "' (" + tensor.describe() + ")");

  return write_file_atomically(path, bytes);
}

}  // namespace ucudnn::onnx_import
