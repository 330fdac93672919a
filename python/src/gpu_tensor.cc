// GpuTensor in Python (gpu_tensor.h): ucudnn::GpuTensor with __dlpack__, __dlpack_device__ and numpy().
#include "python/src/gpu_tensor.h"

#include <dlpack/dlpack.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <memory>
#include <vector>

#if UCUDNN_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include "python/src/arrays.h"
#include "python/src/binding.h"
#include "python/src/errors.h"

namespace ucudnn::python {

namespace {

// What an exported DLManagedTensor keeps: the GpuTensor's Python object (so its memory) and the shape.
struct ExportContext {
  PyObject* owner = nullptr;
  std::vector<int64_t> shape;
};

// The exported tensor's deleter. Consumers may call it without the GIL (PyTorch frees tensors from any thread).
void delete_exported(DLManagedTensor* managed) {
  auto* context = static_cast<ExportContext*>(managed->manager_ctx);
  const PyGILState_STATE gil = PyGILState_Ensure();
  Py_XDECREF(context->owner);
  PyGILState_Release(gil);
  delete context;
  delete managed;
}

// A capsule nobody consumed still owns its tensor (the DLPack protocol); a consumer renames the capsule
// "used_dltensor" and calls the deleter itself.
void delete_unused_capsule(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, "used_dltensor")) return;
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
  if (managed != nullptr) {
    managed->deleter(managed);
  } else {
    PyErr_WriteUnraisable(capsule);
  }
  PyErr_Restore(type, value, traceback);
}

// __dlpack__: the memory as it is. It is complete already (run_dlpack and upload return after their
// work has finished), so no stream waits on anything.
py::capsule to_dlpack(const py::object& self, const py::object& /*stream*/) {
  const GpuTensor& t = self.cast<const PyGpuTensor&>().tensor;
  auto context = std::make_unique<ExportContext>();
  context->shape = t.shape();
  auto managed = std::make_unique<DLManagedTensor>();
  DLTensor& dl = managed->dl_tensor;
  dl.data = t.data();
  dl.device = {kDLCUDA, 0};
  dl.ndim = static_cast<int>(context->shape.size());
  dl.dtype = dlpack_dtype(t.dtype());
  dl.shape = context->shape.data();
  dl.strides = nullptr;  // dense, row-major
  dl.byte_offset = 0;
  context->owner = self.inc_ref().ptr();
  managed->manager_ctx = context.release();
  managed->deleter = delete_exported;
  DLManagedTensor* raw = managed.release();
  try {
    return py::capsule(raw, "dltensor", delete_unused_capsule);
  } catch (...) {
    delete_exported(raw);
    throw;
  }
}

py::object download(const PyGpuTensor& t) {
  Expected<Tensor> host = [&] {
    py::gil_scoped_release release;
    return t.tensor.download();
  }();
  return to_numpy(value_or_raise(std::move(host)));
}

}  // namespace

py::object wrap_gpu_tensor(GpuTensor tensor) { return py::cast(PyGpuTensor{std::move(tensor)}); }

Status synchronize_gpu() {
#if UCUDNN_HAVE_CUDA
  const cudaError_t error = cudaDeviceSynchronize();
  if (error != cudaSuccess)
    return device_error(std::string("cudaDeviceSynchronize before the run: ") + cudaGetErrorString(error));
#endif
  return Status::ok();
}

Status copy_gpu_to_host(void* dst, const void* src, size_t bytes) {
#if UCUDNN_HAVE_CUDA
  const cudaError_t error = cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost);
  if (error != cudaSuccess)
    return device_error(std::string("cudaMemcpy of an output to the host: ") + cudaGetErrorString(error));
  return Status::ok();
#else
  (void)dst, (void)src, (void)bytes;
  return unsupported("copying GPU memory to the host needs a build with the CUDA backend");
#endif
}

void bind_gpu_tensor(py::module_& m) {
  py::class_<PyGpuTensor>(m, "GpuTensor",
                          "A tensor in GPU memory (device 0), owned by this object: what run_dlpack returns on a "
                          "CUDA session. torch.from_dlpack(t) and cupy.from_dlpack(t) read it without a copy.")
      .def_static(
          "upload",
          [](py::handle array) {
            const ImportedArray host = import_array(array, "GpuTensor.upload", /*convert=*/true);
            if (host.memory != Memory::kHost)
              throw py::value_error("GpuTensor.upload: the array is in GPU memory already");
            Expected<GpuTensor> t = [&] {
              py::gil_scoped_release release;
              return GpuTensor::upload(host.host_view());
            }();
            return wrap_gpu_tensor(value_or_raise(std::move(t)));
          },
          py::arg("array"), "A GPU copy of a host array; returns once the copy is complete.")
      .def_static(
          "allocate",
          [](const Shape& shape, const py::object& dtype) {
            const std::optional<DType> type = dtype_from_numpy(py::dtype::from_args(dtype));
            if (!type) throw py::value_error("GpuTensor.allocate: no ucudnn dtype for " + std::string(py::str(dtype)));
            return wrap_gpu_tensor(value_or_raise(GpuTensor::allocate(*type, shape)));
          },
          py::arg("shape"), py::arg("dtype") = "float32", "Zero-filled GPU memory of this shape and dtype.")
      .def_property_readonly("shape", [](const PyGpuTensor& t) { return py::tuple(py::cast(t.tensor.shape())); })
      .def_property_readonly("dtype", [](const PyGpuTensor& t) { return numpy_dtype(t.tensor.dtype()); })
      .def_property_readonly("nbytes", [](const PyGpuTensor& t) { return t.tensor.nbytes(); })
      .def_property_readonly(
          "data_ptr", [](const PyGpuTensor& t) { return reinterpret_cast<uintptr_t>(t.tensor.data()); },
          "The device address (as torch.Tensor.data_ptr()).")
      .def_property_readonly("device", [](const PyGpuTensor&) { return "cuda:0"; })
      .def("numpy", &download, "A host copy as a NumPy array.")
      .def(
          "__array__",
          [](const PyGpuTensor& t, const py::object& dtype) {
            py::object array = download(t);
            return dtype.is_none() ? array : array.attr("astype")(dtype);
          },
          py::arg("dtype") = py::none(), "numpy.asarray(t): a host copy.")
      .def("__dlpack__", &to_dlpack, py::arg("stream") = py::none(),
           "A DLPack capsule over this memory, no copy; the values are complete, so `stream` waits on nothing.")
      .def("__dlpack_device__", [](const PyGpuTensor&) { return py::make_tuple(static_cast<int>(kDLCUDA), 0); })
      .def("__repr__", [](const PyGpuTensor& t) { return "GpuTensor(" + t.tensor.describe() + ")"; });
}

}  // namespace ucudnn::python
