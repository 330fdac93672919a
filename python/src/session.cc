// InferenceSession and NodeArg (session.h).
#include "python/src/session.h"

#include <pybind11/stl.h>

#include <chrono>

#include "python/src/binding.h"
#include "python/src/errors.h"
#include "python/src/gpu_tensor.h"

namespace ucudnn::python {

namespace {

std::string names_of(const std::vector<TensorInfo>& infos) {
  std::string names;
  for (const TensorInfo& info : infos) names += (names.empty() ? "'" : ", '") + info.name + "'";
  return names;
}

}  // namespace

PySession::PySession(const std::string& model_path, SessionOptions options)
    : device_(options.device), model_path_(model_path) {
  Expected<std::unique_ptr<Session>> loaded = [&] {
    py::gil_scoped_release release;
    return Session::load(model_path, options);
  }();
  session_ = value_or_raise(std::move(loaded));
}

size_t PySession::input_index(const std::string& name) const {
  const std::vector<TensorInfo>& infos = inputs();
  for (size_t i = 0; i < infos.size(); ++i)
    if (infos[i].name == name) return i;
  throw py::value_error("the model has no input '" + name + "'; its inputs: " + names_of(infos));
}

size_t PySession::output_index(const std::string& name) const {
  const std::vector<TensorInfo>& infos = outputs();
  for (size_t i = 0; i < infos.size(); ++i)
    if (infos[i].name == name) return i;
  throw py::value_error("the model has no output '" + name + "'; its outputs: " + names_of(infos));
}

std::vector<size_t> PySession::output_indices(const py::handle& names) const {
  std::vector<size_t> indices;
  if (names.is_none()) {
    for (size_t i = 0; i < outputs().size(); ++i) indices.push_back(i);
  } else if (py::isinstance<py::str>(names)) {
    indices.push_back(output_index(names.cast<std::string>()));
  } else {
    for (py::handle name : py::iter(names)) {
      if (!py::isinstance<py::str>(name))
        throw py::type_error("output names must be str, got " + std::string(py::repr(name)));
      indices.push_back(output_index(name.cast<std::string>()));
    }
  }
  return indices;
}

std::vector<ImportedArray> PySession::import_feed(const py::dict& feed, bool convert) const {
  const std::vector<TensorInfo>& infos = inputs();
  std::vector<ImportedArray> arrays(infos.size());
  std::vector<bool> given(infos.size(), false);
  for (const auto& [key, value] : feed) {
    if (!py::isinstance<py::str>(key))
      throw py::type_error("input names must be str, got " + std::string(py::repr(key)));
    const std::string name = key.cast<std::string>();
    const size_t i = input_index(name);
    const std::string what = "input '" + name + "'";
    arrays[i] = import_array(value, what, convert);
    check_matches(arrays[i], infos[i], what);
    given[i] = true;
  }
  std::string missing;
  for (size_t i = 0; i < infos.size(); ++i)
    if (!given[i]) missing += (missing.empty() ? "'" : ", '") + infos[i].name + "'";
  if (!missing.empty()) throw py::value_error("missing input " + missing + "; the model's inputs: " + names_of(infos));
  return arrays;
}

std::vector<Tensor> PySession::run_host(const std::vector<ImportedArray>& arrays) {
  std::vector<Tensor> inputs;
  inputs.reserve(arrays.size());
  for (size_t i = 0; i < arrays.size(); ++i) {
    if (arrays[i].memory != Memory::kHost)
      throw py::value_error("input '" + session_->inputs()[i].name + "' is in GPU memory: " +
                            (device_ == Device::kCpu ? "this session runs on the CPU"
                                                     : "run() takes host arrays; use run_dlpack or an IOBinding"));
    inputs.push_back(arrays[i].host_view());
  }
  Expected<std::vector<Tensor>> outputs = [&] {
    py::gil_scoped_release release;
    return session_->run(inputs);
  }();
  return value_or_raise(std::move(outputs));
}

// Note [inputs from other streams]: Session::run_on_device needs its inputs complete, but the DLPack
// handshake (__dlpack__(stream=...)) orders a producer's stream before the consumer's, and the session's
// stream is its own (non-blocking). So before each such run the binding waits for everything queued on
// the GPU (cudaDeviceSynchronize): the inputs PyTorch or CuPy wrote on any stream, and the zero fill of
// the outputs GpuTensor::allocate queued. A few microseconds when the GPU is idle.
void PySession::run_device(const std::vector<ImportedArray>& arrays, const std::vector<void*>& outputs) {
  for (size_t i = 0; i < arrays.size(); ++i)
    if (arrays[i].memory == Memory::kCuda && arrays[i].device_id != 0)
      throw py::value_error("input '" + session_->inputs()[i].name + "' is on GPU " +
                            std::to_string(arrays[i].device_id) + "; the session runs on GPU 0");
  const Status status = [&]() -> Status {
    py::gil_scoped_release release;
    std::vector<GpuTensor> uploaded;
    std::vector<const void*> inputs;
    for (const ImportedArray& array : arrays) {
      if (array.memory == Memory::kCuda) {
        inputs.push_back(array.data);
        continue;
      }
      UCUDNN_ASSIGN_OR_RETURN(GpuTensor copy, GpuTensor::upload(array.host_view()));
      inputs.push_back(copy.data());
      uploaded.push_back(std::move(copy));
    }
    UCUDNN_RETURN_IF_ERROR(synchronize_gpu());  // Note [inputs from other streams]
    return session_->run_on_device(inputs, outputs);
  }();
  check(status);
}

namespace {

py::list run(PySession& s, const py::object& output_names, const py::dict& feed, const py::object& /*run_options*/) {
  const std::vector<size_t> wanted = s.output_indices(output_names);
  const std::vector<ImportedArray> arrays = s.import_feed(feed, /*convert=*/true);
  std::vector<Tensor> outputs = s.run_host(arrays);
  py::list result(wanted.size());
  for (size_t k = 0; k < wanted.size(); ++k) result[k] = to_numpy(outputs[wanted[k]]);
  return result;
}

py::dict run_dlpack(PySession& s, const py::dict& feed, const py::object& output_names) {
  const std::vector<size_t> wanted = s.output_indices(output_names);
  const std::vector<ImportedArray> arrays = s.import_feed(feed, /*convert=*/false);
  py::dict result;
  if (s.device() == Device::kCpu) {
    std::vector<Tensor> outputs = s.run_host(arrays);
    for (size_t i : wanted) result[py::str(s.outputs()[i].name)] = to_numpy(outputs[i]);
    return result;
  }
  std::vector<py::object> owners;
  std::vector<void*> pointers;
  for (const TensorInfo& info : s.outputs()) {
    owners.push_back(wrap_gpu_tensor(value_or_raise(GpuTensor::allocate(info.dtype, info.shape))));
    pointers.push_back(owners.back().cast<PyGpuTensor&>().tensor.data());
  }
  s.run_device(arrays, pointers);
  for (size_t i : wanted) result[py::str(s.outputs()[i].name)] = owners[i];
  return result;
}

// The C++ side of python/bench_overhead.py: Session::run called `warmup` + `iterations` times in a C++ loop
// on the same inputs, each timed; the timed runs' seconds.
std::vector<double> time_runs(PySession& s, const py::dict& feed, int iterations, int warmup) {
  if (iterations < 1 || warmup < 0) throw py::value_error("_time_runs: iterations must be >= 1 and warmup >= 0");
  const std::vector<ImportedArray> arrays = s.import_feed(feed, /*convert=*/true);
  std::vector<Tensor> inputs;
  for (const ImportedArray& array : arrays) {
    if (array.memory != Memory::kHost) throw py::value_error("_time_runs takes host arrays");
    inputs.push_back(array.host_view());
  }
  std::vector<double> seconds;
  Status status;
  {
    py::gil_scoped_release release;
    for (int k = 0; k < warmup + iterations && status.is_ok(); ++k) {
      const auto start = std::chrono::steady_clock::now();
      Expected<std::vector<Tensor>> outputs = s.session().run(inputs);
      const auto stop = std::chrono::steady_clock::now();
      status = outputs.status();
      if (k >= warmup) seconds.push_back(std::chrono::duration<double>(stop - start).count());
    }
  }
  check(status);
  return seconds;
}

py::list profile(PySession& s, const py::dict& feed) {
  const std::vector<ImportedArray> arrays = s.import_feed(feed, /*convert=*/true);
  std::vector<Tensor> inputs;
  for (const ImportedArray& array : arrays) {
    if (array.memory != Memory::kHost) throw py::value_error("profile takes host arrays");
    inputs.push_back(array.host_view());
  }
  Expected<std::vector<StepProfile>> steps = [&] {
    py::gil_scoped_release release;
    return s.session().profile(inputs);
  }();
  py::list result;
  for (const StepProfile& step : value_or_raise(std::move(steps)))
    result.append(py::dict(py::arg("node") = step.node, py::arg("op") = step.op, py::arg("ms") = step.ms));
  return result;
}

}  // namespace

py::dict memory_to_dict(const MemoryStats& m) {
  return py::dict(py::arg("arena_bytes") = m.arena_bytes, py::arg("unplanned_bytes") = m.unplanned_bytes,
                  py::arg("weight_bytes") = m.weight_bytes, py::arg("workspace_bytes") = m.workspace_bytes,
                  py::arg("largest_workspace_bytes") = m.largest_workspace_bytes,
                  py::arg("kernel_bytes") = m.kernel_bytes, py::arg("peak_bytes") = m.peak_bytes());
}

void bind_session(py::module_& m) {
  py::class_<TensorInfo>(m, "NodeArg", "A model input or output: name, shape, type (as ONNX Runtime's NodeArg).")
      .def_readonly("name", &TensorInfo::name)
      .def_property_readonly(
          "shape", [](const TensorInfo& t) { return py::list(py::cast(t.shape)); },
          "The dims, resolved at load (the batch included).")
      .def_property_readonly(
          "type", [](const TensorInfo& t) { return ort_type_name(t.dtype); },
          "ONNX Runtime's type name: 'tensor(float)', 'tensor(int64)', ...")
      .def_property_readonly(
          "dtype", [](const TensorInfo& t) { return numpy_dtype(t.dtype); }, "The NumPy dtype.")
      .def("__repr__", [](const TensorInfo& t) {
        return "NodeArg(name='" + t.name + "', type='" + ort_type_name(t.dtype) +
               "', shape=" + shape_to_string(t.shape) + ")";
      });

  py::class_<PySession>(m, "InferenceSession",
                        "A loaded, planned model (ucudnn::Session). The Python class ucudnn.InferenceSession "
                        "takes keyword options; this one takes (model_path, SessionOptions).")
      .def(py::init([](const std::string& path, const SessionOptions& options) {
             return std::make_unique<PySession>(path, options);
           }),
           py::arg("model_path"), py::arg("options"))
      .def(
          "get_inputs", [](const PySession& s) { return s.inputs(); }, "The model's inputs (NodeArg), in order.")
      .def(
          "get_outputs", [](const PySession& s) { return s.outputs(); }, "The model's outputs (NodeArg), in order.")
      .def("run", &run, py::arg("output_names"), py::arg("input_feed"), py::arg("run_options") = py::none(),
           "Runs the model on {input name: array} (NumPy arrays, or anything numpy.asarray takes; host memory) "
           "and returns the outputs named by output_names (None: all) as a list of NumPy arrays. Each input must "
           "have its NodeArg's dtype and shape (ValueError otherwise); contiguous ones are read in place.")
      .def("run_dlpack", &run_dlpack, py::arg("input_feed"), py::arg("output_names") = py::none(),
           "Runs the model on {input name: array with __dlpack__ or the buffer protocol}, read where they lie "
           "(no copy when dense and on the session's device), and returns {output name: array}: NumPy arrays on "
           "the CPU, GpuTensors in GPU memory on CUDA; both go to torch.from_dlpack without a copy.")
      .def("_time_runs", &time_runs, py::arg("input_feed"), py::arg("iterations"), py::arg("warmup") = 2,
           "Benchmarks: Session::run timed in a C++ loop, the seconds of each timed run.")
      .def("profile", &profile, py::arg("input_feed"),
           "One run timed per step: a list of {'node', 'op', 'ms'} in run order.")
      .def(
          "memory", [](PySession& s) { return memory_to_dict(s.session().memory()); }, "Memory of the session, bytes.")
      .def(
          "plan_json", [](PySession& s) { return s.session().plan_json(); }, "The plan this session runs (JSON).")
      .def_property_readonly("layout", [](PySession& s) { return s.session().layout(); })
      .def_property_readonly("batch_groups",
                             [](PySession& s) {
                               const BatchGroups g = s.session().batch_groups();
                               return py::dict(py::arg("groups") = g.groups, py::arg("group_batch") = g.group_batch,
                                               py::arg("note") = g.note);
                             })
      .def_property_readonly("cuda_graph_in_use", [](PySession& s) { return s.session().cuda_graph_in_use(); })
      .def(
          "set_cuda_graph", [](PySession& s, CudaGraph mode) { check(s.session().set_cuda_graph(mode)); },
          py::arg("mode"))
      .def_property_readonly("device", &PySession::device)
      .def_property_readonly("model_path", &PySession::model_path);
}

}  // namespace ucudnn::python
