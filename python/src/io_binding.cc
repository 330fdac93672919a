// IOBinding: ONNX Runtime's run_with_iobinding for ucudnn. Arrays are bound to inputs and (optionally)
// outputs by name; a run reads the inputs where they lie and writes the bound outputs in place:
//
//   binding = session.io_binding()
//   binding.bind_input("input", x)           # any array run_dlpack takes (torch CUDA tensors on CUDA)
//   binding.bind_output("output", y)         # optional: a dense, writable array of the output's dtype and shape
//   session.run_with_iobinding(binding)
//   binding.get_outputs()                    # the bound arrays, or those the run allocated
//
// Unlike ONNX Runtime's, bind_input and bind_output take array objects, not raw pointers. On a CUDA
// session, outputs bound in GPU memory (device 0) are written by Session::run_on_device with no copy,
// ones bound in host memory are copied down after the run; on a CPU session a bound output receives a
// copy of the session's result (Session::run returns its own tensors). Unbound outputs are allocated on
// the session's device. Bound buffers must not overlap each other.
#include <pybind11/stl.h>

#include <cstring>
#include <map>

#include "python/src/binding.h"
#include "python/src/errors.h"
#include "python/src/gpu_tensor.h"
#include "python/src/session.h"

namespace ucudnn::python {

namespace {

class PyIOBinding {
 public:
  explicit PyIOBinding(py::object session) : session_object_(std::move(session)) {
    session_ = session_object_.cast<PySession*>();
  }

  void bind_input(const std::string& name, py::object value) {
    session_->input_index(name);  // ValueError for a name the model lacks
    inputs_[name] = std::move(value);
  }
  void bind_output(const std::string& name, py::object value) {
    session_->output_index(name);
    outputs_[name] = std::move(value);
  }
  const PySession* session() const { return session_; }
  void clear_binding_inputs() { inputs_.clear(); }
  void clear_binding_outputs() { outputs_.clear(); }
  py::list get_outputs() const { return py::cast(results_); }
  py::list copy_outputs_to_cpu() const;
  void run();

 private:
  py::object session_object_;  // keeps the session alive
  PySession* session_ = nullptr;
  std::map<std::string, py::object> inputs_, outputs_;
  std::vector<py::object> results_;  // after a run: one per output, in the order of outputs()
};

void PyIOBinding::run() {
  py::dict feed;
  for (const auto& [name, value] : inputs_) feed[py::str(name)] = value;
  const std::vector<ImportedArray> arrays = session_->import_feed(feed, /*convert=*/false);
  const std::vector<TensorInfo>& infos = session_->outputs();
  std::vector<ImportedArray> bound(infos.size());
  std::vector<py::object> results(infos.size());
  for (const auto& [name, value] : outputs_) {
    if (value.is_none()) continue;
    const size_t i = session_->output_index(name);
    const std::string what = "output '" + name + "'";
    bound[i] = import_array(value, what, /*convert=*/false);
    check_matches(bound[i], infos[i], what);
    if (bound[i].copied || !bound[i].writable)
      throw py::value_error(what + " is written in place: bind a dense (C-contiguous), writable array");
    results[i] = value;
  }
  const bool cpu = session_->device() == Device::kCpu;
  if (cpu) {
    for (size_t i = 0; i < infos.size(); ++i)
      if (results[i] && bound[i].memory == Memory::kCuda)
        throw py::value_error("output '" + infos[i].name + "' is bound in GPU memory; this session runs on the CPU");
    std::vector<Tensor> outputs = session_->run_host(arrays);
    for (size_t i = 0; i < infos.size(); ++i) {
      if (!results[i]) {
        results[i] = to_numpy(outputs[i]);
      } else if (bound[i].nbytes() > 0) {
        std::memcpy(bound[i].data, outputs[i].raw(), bound[i].nbytes());
      }
    }
  } else {
    std::vector<void*> pointers(infos.size());
    std::vector<py::object> staged(infos.size());  // GPU memory the run writes for unbound and host-bound outputs
    for (size_t i = 0; i < infos.size(); ++i) {
      if (results[i] && bound[i].memory == Memory::kCuda) {
        if (bound[i].device_id != 0)
          throw py::value_error("output '" + infos[i].name + "' is bound on GPU " + std::to_string(bound[i].device_id) +
                                "; the session runs on GPU 0");
        pointers[i] = bound[i].data;
        continue;
      }
      staged[i] = wrap_gpu_tensor(value_or_raise(GpuTensor::allocate(infos[i].dtype, infos[i].shape)));
      pointers[i] = staged[i].cast<PyGpuTensor&>().tensor.data();
      if (!results[i]) results[i] = staged[i];
    }
    session_->run_device(arrays, pointers);
    for (size_t i = 0; i < infos.size(); ++i) {
      if (!staged[i] || staged[i].is(results[i])) continue;  // written in place, or allocated by the run
      Expected<Tensor> host = staged[i].cast<PyGpuTensor&>().tensor.download();
      const Tensor values = value_or_raise(std::move(host));
      if (bound[i].nbytes() > 0) std::memcpy(bound[i].data, values.raw(), bound[i].nbytes());
    }
  }
  results_ = std::move(results);
}

py::list PyIOBinding::copy_outputs_to_cpu() const {
  py::list copies;
  for (size_t i = 0; i < results_.size(); ++i) {
    const py::object& result = results_[i];
    if (py::isinstance<PyGpuTensor>(result)) {
      copies.append(result.attr("numpy")());
      continue;
    }
    const ImportedArray array = import_array(result, "output '" + session_->outputs()[i].name + "'", false);
    Tensor copy = value_or_raise(Tensor::allocate_uninitialized(array.dtype, array.shape));
    if (array.nbytes() > 0) {
      if (array.memory == Memory::kHost) {
        std::memcpy(copy.raw(), array.data, array.nbytes());
      } else {
        check(copy_gpu_to_host(copy.raw(), array.data, array.nbytes()));
      }
    }
    copies.append(to_numpy(std::move(copy)));
  }
  return copies;
}

}  // namespace

void bind_io_binding(py::module_& m) {
  py::class_<PyIOBinding>(m, "IOBinding",
                          "Arrays bound to a session's inputs and outputs by name, for run_with_iobinding "
                          "(ONNX Runtime's IOBinding, taking array objects instead of pointers).")
      .def(py::init<py::object>(), py::arg("session"))
      .def("bind_input", &PyIOBinding::bind_input, py::arg("name"), py::arg("value"),
           "Binds an array (NumPy, or with __dlpack__ or the buffer protocol) to input `name`; kept until cleared.")
      .def("bind_cpu_input", &PyIOBinding::bind_input, py::arg("name"), py::arg("value"), "As bind_input.")
      .def("bind_output", &PyIOBinding::bind_output, py::arg("name"), py::arg("value") = py::none(),
           "Binds a dense, writable array the run writes output `name` into; None: the run allocates it.")
      .def("clear_binding_inputs", &PyIOBinding::clear_binding_inputs)
      .def("clear_binding_outputs", &PyIOBinding::clear_binding_outputs)
      .def("get_outputs", &PyIOBinding::get_outputs,
           "After a run: per output, in order, the bound array or the one the run allocated (NumPy or GpuTensor).")
      .def("copy_outputs_to_cpu", &PyIOBinding::copy_outputs_to_cpu,
           "After a run: host copies (NumPy) of the outputs.");

  auto session = py::reinterpret_borrow<py::class_<PySession>>(m.attr("InferenceSession"));
  session.def(
      "io_binding", [](py::object self) { return PyIOBinding(std::move(self)); }, "A new IOBinding of this session.");
  session.def(
      "run_with_iobinding",
      [](const PySession& self, PyIOBinding& binding, const py::object&) {
        if (binding.session() != &self) throw py::value_error("run_with_iobinding: the IOBinding is another session's");
        binding.run();
      },
      py::arg("iobinding"), py::arg("run_options") = py::none(),
      "Runs on the binding's inputs, writing its bound outputs in place (IOBinding).");
}

}  // namespace ucudnn::python
