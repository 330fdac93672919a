// Status → Python exceptions (Note [exceptions] in errors.h).
#include "python/src/errors.h"

#include <pybind11/pybind11.h>

namespace ucudnn::python {

namespace py = pybind11;

[[noreturn]] void raise_status(const Status& status) {
  const std::string text = status.to_string();
  switch (status.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kInvalidModel:
    case StatusCode::kUnsupported:
    case StatusCode::kInfeasible:
      throw py::value_error(text);
    case StatusCode::kOutOfMemory:
      PyErr_SetString(PyExc_MemoryError, text.c_str());
      throw py::error_already_set();
    case StatusCode::kNotFound:
      PyErr_SetString(PyExc_FileNotFoundError, text.c_str());
      throw py::error_already_set();
    case StatusCode::kOk:  // a caller's bug: say so rather than raise nothing
      throw std::runtime_error("internal error: an OK status was raised");
    default:
      throw std::runtime_error(text);  // pybind11: RuntimeError
  }
}

}  // namespace ucudnn::python
