// Arrays in and out of the binding. In: a NumPy array, an object with __dlpack__ (PyTorch, CuPy,
// JAX), one with the buffer protocol, or (where asked) anything numpy.asarray takes, becomes a dense
// row-major array the C++ API can read — where it lies when its layout allows (Note [zero copy]).
// Out: a host tensor the API returned becomes a NumPy array over the tensor's own memory.
#pragma once

#include <dlpack/dlpack.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <memory>
#include <optional>
#include <string>

#include "ucudnn/ucudnn.h"

namespace ucudnn::python {

namespace py = pybind11;

// Note [zero copy]: an input is read where it lies when it is dense and row-major (C-contiguous; the
// strides of dims of size 1 do not matter) in memory the session can read: host memory for a CPU session,
// and for a CUDA session GPU memory of device 0 (through Session::run_on_device) or host memory (copied
// up once, as Session::run does). A strided host array is copied into a dense one first (NumPy's
// ascontiguousarray, or a copy here for DLPack); a strided GPU array is refused (ValueError), as is
// GPU memory given to a CPU session. The outputs a run returns are the session's own host tensors,
// handed to NumPy without a copy (a NumPy array is itself a DLPack producer: torch.from_dlpack takes it
// as it is), or GPU memory the binding allocated (GpuTensor, with __dlpack__).

enum class Memory { kHost, kCuda };

// Runs a DLPack producer's deleter (its memory may be released then). Needs the GIL.
struct DlpackDeleter {
  void operator()(DLManagedTensor* managed) const;
};

// An array given to the binding, dense and row-major, with what keeps its memory valid.
// Destroy it with the GIL held (it may release Python objects).
struct ImportedArray {
  DType dtype = DType::kUndefined;
  Shape shape;
  Memory memory = Memory::kHost;
  int device_id = 0;     // the GPU, for Memory::kCuda
  void* data = nullptr;  // the values, dense: the object's own memory or a copy's
  bool copied = false;   // the object was strided: `data` is a dense copy
  bool writable = true;  // false for a read-only NumPy array or buffer
  Tensor copy;           // the copy of a strided DLPack array
  // What holds `data`: the NumPy array (or its dense copy), or the DLPack tensor.
  py::object owner;
  std::unique_ptr<DLManagedTensor, DlpackDeleter> dlpack;

  // A host tensor over `data` (Memory::kHost); it borrows the memory this array keeps alive.
  Tensor host_view() const { return Tensor::view(dtype, shape, data); }
  size_t nbytes() const { return static_cast<size_t>(shape_numel(shape)) * dtype_size(dtype); }
};

// Imports `value`, named `what` in errors ("input 'x'"): a NumPy array; an object with __dlpack__; one
// with the buffer protocol; with `convert` also anything numpy.asarray turns into an array (lists).
// TypeError for an object that is none of these; ValueError for a dtype ucudnn has no tensor of, memory
// that is neither the host's nor a CUDA GPU's, or a strided GPU array.
ImportedArray import_array(py::handle value, const std::string& what, bool convert);

// ValueError naming `what` unless `array` has `info`'s dtype and shape.
void check_matches(const ImportedArray& array, const TensorInfo& info, const std::string& what);

// An owning host tensor holding a copy of `value` (any array import_array takes, in host memory).
Tensor host_tensor_copy(py::handle value, const std::string& what);

// A NumPy array over `tensor`'s memory, which the array keeps alive (a tensor that only borrows its
// memory is copied first).
py::array to_numpy(Tensor tensor);

std::optional<DType> dtype_from_numpy(const py::dtype& dtype);  // nullopt: no ucudnn dtype
py::dtype numpy_dtype(DType dtype);
// ONNX Runtime's name of a tensor type: "tensor(float)", "tensor(int64)".
std::string ort_type_name(DType dtype);
DLDataType dlpack_dtype(DType dtype);
// "float32[2, 3, 8, 8]"
std::string describe(DType dtype, const Shape& shape);

}  // namespace ucudnn::python
