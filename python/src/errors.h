// Status → Python exceptions: how every binding call reports a failed Status (Note [exceptions]).
#pragma once

#include <utility>

#include "runtime/core/status.h"

namespace ucudnn::python {

// Note [exceptions]: a failed Status becomes the Python exception its code means, with the Status's
// text ("InvalidArgument: input 'x' must be float32[2, 3], got ...") as the message:
//   InvalidArgument, InvalidModel, Unsupported, Infeasible → ValueError (the call cannot work as asked)
//   OutOfMemory → MemoryError;  NotFound → FileNotFoundError;  IoError, DeviceError, Internal → RuntimeError
// Checks the binding makes itself (an unknown input name, an array of the wrong dtype or shape) raise
// ValueError, and TypeError for an object that is no array at all. Call with the GIL held.
[[noreturn]] void raise_status(const Status& status);

// Raises `status` unless it is OK.
inline void check(const Status& status) {
  if (!status.is_ok()) raise_status(status);
}

// The value of `expected`, or its Status raised.
template <typename T>
T value_or_raise(Expected<T>&& expected) {
  if (!expected.has_value()) raise_status(expected.status());
  return std::move(expected).value();
}

}  // namespace ucudnn::python
