// The extension module ucudnn._ucudnn: the parts bound by each file (binding.h), info(), and tensor
// files. The package ucudnn (python/ucudnn/__init__.py) re-exports it with keyword-option front ends.
#include <pybind11/stl.h>

#include "python/src/arrays.h"
#include "python/src/binding.h"
#include "python/src/errors.h"
#include "ucudnn/ucudnn.h"

namespace ucudnn::python {

namespace {

py::dict build_info() {
#if UCUDNN_HAVE_CUDA
  const bool cuda_built = true;
#else
  const bool cuda_built = false;
#endif
#if UCUDNN_PYTHON_ONEDNN
  const bool onednn = true;
#else
  const bool onednn = false;
#endif
  return py::dict(py::arg("version") = UCUDNN_VERSION, py::arg("cuda_built") = cuda_built,
                  py::arg("cuda_available") = cuda_available(), py::arg("onednn") = onednn);
}

py::list io_list(const std::vector<ModelInfo::Io>& ios) {
  py::list list;
  for (const ModelInfo::Io& io : ios)
    list.append(py::dict(py::arg("name") = io.name, py::arg("dtype") = io.dtype, py::arg("dims") = io.dims));
  return list;
}

py::dict model_info_dict(const std::string& path) {
  Expected<ModelInfo> read = [&] {
    py::gil_scoped_release release;
    return model_info(path);
  }();
  const ModelInfo info = value_or_raise(std::move(read));
  return py::dict(py::arg("ir_version") = info.ir_version, py::arg("opset") = info.opset,
                  py::arg("producer") = info.producer, py::arg("inputs") = io_list(info.inputs),
                  py::arg("outputs") = io_list(info.outputs), py::arg("op_counts") = info.op_counts,
                  py::arg("unsupported") = info.unsupported, py::arg("parameter_count") = info.parameter_count);
}

// For the tests of Note [zero copy]: how the binding sees an array — where its values lie and whether
// it had to copy them — by the same import the runs use.
py::dict import_report(py::handle value) {
  const ImportedArray array = import_array(value, "array", /*convert=*/false);
  return py::dict(py::arg("data_ptr") = reinterpret_cast<uintptr_t>(array.data),
                  py::arg("dtype") = numpy_dtype(array.dtype), py::arg("shape") = array.shape,
                  py::arg("device") = array.memory == Memory::kHost ? "cpu" : "cuda:" + std::to_string(array.device_id),
                  py::arg("copied") = array.copied);
}

}  // namespace

}  // namespace ucudnn::python

PYBIND11_MODULE(_ucudnn, m) {
  namespace py = pybind11;
  using namespace ucudnn::python;
  m.doc() = "ucudnn's C++ API (include/ucudnn/ucudnn.h) for Python; import the package `ucudnn`.";
  bind_options(m);
  bind_gpu_tensor(m);
  bind_session(m);
  bind_io_binding(m);
  bind_plan(m);
  bind_trainer(m);

  m.attr("__version__") = UCUDNN_VERSION;
  m.attr("UNLIMITED") = ucudnn::kUnlimitedWorkspace;
  m.def("cuda_available", &ucudnn::cuda_available, "True when this build has the CUDA backend and a GPU is present.");
  m.def(
      "info",
      [](const std::optional<std::string>& model_path) -> py::dict {
        return model_path ? model_info_dict(*model_path) : build_info();
      },
      py::arg("model_path") = py::none(),
      "Without a model: this build (version, cuda_built, cuda_available, onednn). With one: what `ucudnn info` "
      "shows of it (ir_version, opset, producer, inputs, outputs, op_counts, unsupported, parameter_count).");
  m.def(
      "check_model",
      [](const std::string& model_path) {
        ucudnn::Status status;
        {
          py::gil_scoped_release release;
          status = ucudnn::check_model_imports(model_path);
        }
        check(status);
      },
      py::arg("model_path"), "Raises ValueError naming the first node ucudnn cannot run; None when it can.");
  m.def(
      "load_tensor", [](const std::string& path) { return to_numpy(value_or_raise(ucudnn::read_tensor_file(path))); },
      py::arg("path"), "A tensor file (ONNX TensorProto .pb, or NumPy .npy) as a NumPy array.");
  m.def(
      "save_tensor",
      [](const std::string& path, py::handle array, const std::string& name) {
        check(ucudnn::write_tensor_file(path, name, host_tensor_copy(array, "save_tensor")));
      },
      py::arg("path"), py::arg("array"), py::arg("name") = "",
      "Writes an array as an ONNX TensorProto file named `name`, atomically.");
  m.def("_import_array", &import_report, py::arg("array"),
        "Tests: where the binding reads an array's values (data_ptr, device) and whether it copied them.");
}
