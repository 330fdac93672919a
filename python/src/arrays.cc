// Arrays in and out of the binding (arrays.h; Note [zero copy]).
#include "python/src/arrays.h"

#include <cstring>

#include "python/src/errors.h"

namespace ucudnn::python {

namespace {

// DLPack ≥ 0.8's code for bool (DLPack 0.6, the header here, has none; PyTorch ≥ 2 and NumPy ≥ 1.25 use it).
constexpr uint8_t kDlpackBool = 6;

std::string type_name(py::handle value) { return py::str(py::type::handle_of(value).attr("__name__")); }

// The dtype of a DLPack tensor, or ValueError naming it.
DType dtype_from_dlpack(const DLDataType& type, const std::string& what) {
  if (type.lanes == 1) {
    if (type.code == kDLFloat && type.bits == 32) return DType::kFloat32;
    if (type.code == kDLFloat && type.bits == 64) return DType::kFloat64;
    if (type.code == kDLFloat && type.bits == 16) return DType::kFloat16;
    if (type.code == kDLBfloat && type.bits == 16) return DType::kBFloat16;
    if (type.code == kDLInt && type.bits == 8) return DType::kInt8;
    if (type.code == kDLInt && type.bits == 32) return DType::kInt32;
    if (type.code == kDLInt && type.bits == 64) return DType::kInt64;
    if (type.code == kDLUInt && type.bits == 8) return DType::kUInt8;
    if (type.code == kDlpackBool && type.bits == 8) return DType::kBool;
  }
  throw py::value_error(what + ": DLPack dtype (code " + std::to_string(type.code) + ", " + std::to_string(type.bits) +
                        " bits, " + std::to_string(type.lanes) +
                        " lanes) is not one ucudnn has (float32, float64, float16, bfloat16, int8, int32, int64, uint8, "
                        "bool)");
}

// Whether `strides` (in elements; null: row-major) lay `shape` out densely in row-major order.
bool is_dense(const Shape& shape, const int64_t* strides) {
  if (strides == nullptr || shape_numel(shape) == 0) return true;
  int64_t expected = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] != 1 && strides[i] != expected) return false;  // a dim of size 1 is never stepped along
    expected *= shape[i];
  }
  return true;
}

// Copies the strided array at `src` (strides in bytes) into the dense row-major `dst`, one row at a time.
void copy_strided(const char* src, const std::vector<int64_t>& byte_strides, const Shape& shape, size_t dim,
                  size_t item_bytes, char** dst) {
  if (dim == shape.size()) {  // a scalar
    std::memcpy(*dst, src, item_bytes);
    *dst += item_bytes;
    return;
  }
  if (dim + 1 == shape.size() && byte_strides[dim] == static_cast<int64_t>(item_bytes)) {
    const size_t row = static_cast<size_t>(shape[dim]) * item_bytes;
    std::memcpy(*dst, src, row);
    *dst += row;
    return;
  }
  for (int64_t i = 0; i < shape[dim]; ++i)
    copy_strided(src + i * byte_strides[dim], byte_strides, shape, dim + 1, item_bytes, dst);
}

ImportedArray from_numpy(py::array array, const std::string& what) {
  const std::optional<DType> dtype = dtype_from_numpy(array.dtype());
  if (!dtype)
    throw py::value_error(
        what + ": NumPy dtype " + std::string(py::str(array.dtype())) +
        " is not one ucudnn has (float32, float64, int8, int32, int64, uint8, bool; native byte order)");
  ImportedArray out;
  out.dtype = *dtype;
  out.writable = array.writeable();
  if (!(array.flags() & py::array::c_style)) {
    array = py::array::ensure(array, py::array::c_style);  // NumPy's dense copy
    if (!array) throw py::error_already_set();
    out.copied = true;
    out.writable = false;  // writing the copy would not reach the caller's array
  }
  out.shape.assign(array.shape(), array.shape() + array.ndim());
  out.data = const_cast<void*>(array.data());
  out.owner = std::move(array);
  return out;
}

ImportedArray from_dlpack(py::handle value, const std::string& what) {
  py::object capsule = value.attr("__dlpack__")();
  if (!PyCapsule_IsValid(capsule.ptr(), "dltensor"))
    throw py::type_error(what + ": " + type_name(value) + ".__dlpack__() returned no unused DLPack capsule");
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
  if (managed == nullptr || PyCapsule_SetName(capsule.ptr(), "used_dltensor") != 0) throw py::error_already_set();
  ImportedArray out;
  out.dlpack.reset(managed);  // ours now: its deleter runs when `out` goes
  const DLTensor& t = managed->dl_tensor;
  out.dtype = dtype_from_dlpack(t.dtype, what);
  switch (t.device.device_type) {
    case kDLCPU:
    case kDLCUDAHost:  // pinned host memory
      out.memory = Memory::kHost;
      break;
    case kDLCUDA:
    case kDLCUDAManaged:
      out.memory = Memory::kCuda;
      out.device_id = t.device.device_id;
      break;
    default:
      throw py::value_error(what + ": DLPack device type " + std::to_string(t.device.device_type) +
                            " is neither host memory nor a CUDA GPU's");
  }
  if (t.ndim < 0) throw py::value_error(what + ": DLPack tensor of negative rank");
  out.shape.assign(t.shape, t.shape + t.ndim);
  for (int64_t d : out.shape)
    if (d < 0) throw py::value_error(what + ": DLPack tensor of shape " + shape_to_string(out.shape));
  out.data = static_cast<char*>(t.data) + t.byte_offset;
  if (is_dense(out.shape, t.strides)) return out;
  if (out.memory == Memory::kCuda)
    throw py::value_error(what + ": a strided GPU array (" + describe(out.dtype, out.shape) +
                          ") cannot be read in place; make it contiguous first (torch: .contiguous())");
  out.copy = value_or_raise(Tensor::allocate_uninitialized(out.dtype, out.shape));
  const size_t item = dtype_size(out.dtype);
  std::vector<int64_t> byte_strides(t.strides, t.strides + t.ndim);
  for (int64_t& s : byte_strides) s *= static_cast<int64_t>(item);
  char* dst = static_cast<char*>(out.copy.raw());
  if (out.copy.numel() > 0) copy_strided(static_cast<const char*>(out.data), byte_strides, out.shape, 0, item, &dst);
  out.data = out.copy.raw();
  out.copied = true;
  return out;
}

}  // namespace

void DlpackDeleter::operator()(DLManagedTensor* managed) const {
  if (managed != nullptr && managed->deleter != nullptr) managed->deleter(managed);
}

ImportedArray import_array(py::handle value, const std::string& what, bool convert) {
  if (py::isinstance<py::array>(value)) return from_numpy(py::reinterpret_borrow<py::array>(value), what);
  if (py::hasattr(value, "__dlpack__")) return from_dlpack(value, what);
  if (PyObject_CheckBuffer(value.ptr()) || convert) {
    // NumPy views a buffer without copying; `convert` also takes sequences (a copy, as ONNX Runtime does).
    py::array array = py::array::ensure(value);
    if (array) return from_numpy(std::move(array), what);
  }
  throw py::type_error(what + ": expected an array (NumPy, or an object with __dlpack__ or the buffer protocol), got " +
                       type_name(value));
}

void check_matches(const ImportedArray& array, const TensorInfo& info, const std::string& what) {
  if (array.dtype != info.dtype || array.shape != info.shape)
    throw py::value_error(what + " must be " + describe(info.dtype, info.shape) + ", got " +
                          describe(array.dtype, array.shape));
}

Tensor host_tensor_copy(py::handle value, const std::string& what) {
  const ImportedArray array = import_array(value, what, /*convert=*/true);
  if (array.memory != Memory::kHost)
    throw py::value_error(what + ": expected host memory (a NumPy array, a CPU tensor), got GPU memory");
  Tensor copy = value_or_raise(Tensor::allocate_uninitialized(array.dtype, array.shape));
  if (array.nbytes() > 0) std::memcpy(copy.raw(), array.data, array.nbytes());
  return copy;
}

py::array to_numpy(Tensor tensor) {
  if (!tensor.is_owning()) tensor = value_or_raise(tensor.clone());
  auto holder = std::make_unique<Tensor>(std::move(tensor));
  Tensor* t = holder.get();
  py::capsule base(t, [](void* p) { delete static_cast<Tensor*>(p); });
  holder.release();  // the capsule owns it now
  const std::vector<py::ssize_t> shape(t->shape().begin(), t->shape().end());
  return py::array(numpy_dtype(t->dtype()), shape, t->raw(), base);
}

// The dtype's byte order, kind and size are read as Python attributes: pybind11 2.10's accessors read
// NumPy 1's PyArray_Descr struct, whose `elsize` NumPy 2 moved (the module would see float32 as another
// size there, as it did on the GPU machine's NumPy 2.5).
std::optional<DType> dtype_from_numpy(const py::dtype& dtype) {
  if (dtype.attr("byteorder").cast<std::string>() == ">") return std::nullopt;  // this is a little-endian machine
  const auto size = dtype.attr("itemsize").cast<py::ssize_t>();
  switch (dtype.attr("kind").cast<std::string>().at(0)) {
    case 'f':
      if (size == 2) return DType::kFloat16;
      if (size == 4) return DType::kFloat32;
      if (size == 8) return DType::kFloat64;
      break;
    case 'i':
      if (size == 1) return DType::kInt8;
      if (size == 4) return DType::kInt32;
      if (size == 8) return DType::kInt64;
      break;
    case 'u':
      if (size == 1) return DType::kUInt8;
      break;
    case 'b':
      if (size == 1) return DType::kBool;
      break;
    default:
      break;
  }
  return std::nullopt;
}

py::dtype numpy_dtype(DType dtype) {
  switch (dtype) {
    case DType::kFloat16:
      return py::dtype("float16");  // Float16 holds IEEE half's bits, as numpy.float16 does
    case DType::kBFloat16:
      throw py::value_error("a bfloat16 tensor has no NumPy dtype (NumPy has no bfloat16); give the model a "
                            "float32 or float16 output");
    case DType::kFloat32:
      return py::dtype::of<float>();
    case DType::kFloat64:
      return py::dtype::of<double>();
    case DType::kUInt8:
      return py::dtype::of<uint8_t>();
    case DType::kInt8:
      return py::dtype::of<int8_t>();
    case DType::kInt32:
      return py::dtype::of<int32_t>();
    case DType::kInt64:
      return py::dtype::of<int64_t>();
    case DType::kBool:
      return py::dtype::of<bool>();
    case DType::kUndefined:
      break;
  }
  throw py::value_error("a tensor of undefined dtype has no NumPy dtype");
}

std::string ort_type_name(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return "tensor(float)";
    case DType::kFloat64:
      return "tensor(double)";
    case DType::kUndefined:
      return "tensor(undefined)";
    default:
      return std::string("tensor(") + dtype_name(dtype) + ")";  // int8, int32, int64, uint8, bool
  }
}

DLDataType dlpack_dtype(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return {kDLFloat, 32, 1};
    case DType::kFloat64:
      return {kDLFloat, 64, 1};
    case DType::kFloat16:
      return {kDLFloat, 16, 1};
    case DType::kBFloat16:
      return {kDLBfloat, 16, 1};
    case DType::kInt8:
      return {kDLInt, 8, 1};
    case DType::kInt32:
      return {kDLInt, 32, 1};
    case DType::kInt64:
      return {kDLInt, 64, 1};
    case DType::kUInt8:
      return {kDLUInt, 8, 1};
    case DType::kBool:
      return {kDlpackBool, 8, 1};
    case DType::kUndefined:
      break;
  }
  throw py::value_error("a tensor of undefined dtype has no DLPack dtype");
}

std::string describe(DType dtype, const Shape& shape) { return dtype_name(dtype) + shape_to_string(shape); }

}  // namespace ucudnn::python
