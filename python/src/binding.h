// The parts of the extension module ucudnn._ucudnn, each bound by its own file (module.cc calls them in
// this order: a later part's signatures name the earlier parts' classes).
#pragma once

#include <pybind11/pybind11.h>

namespace ucudnn::python {

namespace py = pybind11;

void bind_options(py::module_& m);     // options.cc: Device, Policy, ..., SessionOptions, TrainOptions
void bind_gpu_tensor(py::module_& m);  // gpu_tensor.cc: GpuTensor
void bind_session(py::module_& m);     // session.cc: NodeArg, InferenceSession
void bind_io_binding(py::module_& m);  // io_binding.cc: IOBinding, InferenceSession.io_binding/run_with_iobinding
void bind_plan(py::module_& m);        // plan.cc: PlanSummary, Plan, plan()
void bind_trainer(py::module_& m);     // trainer.cc: StepResult, Trainer

}  // namespace ucudnn::python
