// GpuTensor in Python: device memory the binding allocated (the outputs of a CUDA session's run_dlpack,
// GpuTensor.upload), owned by the Python object and handed to DLPack consumers (torch.from_dlpack, CuPy)
// without a copy: an exported tensor keeps its Python object, and so the memory, alive.
#pragma once

#include <pybind11/pybind11.h>

#include "ucudnn/ucudnn.h"

namespace ucudnn::python {

namespace py = pybind11;

struct PyGpuTensor {
  GpuTensor tensor;
};

// A Python GpuTensor owning `tensor`.
py::object wrap_gpu_tensor(GpuTensor tensor);

// Waits for all work queued on the GPU, from any stream (Note [inputs from other streams] in session.cc);
// OK without the CUDA backend.
Status synchronize_gpu();

// Copies `bytes` from GPU memory to host memory (a DLPack GPU array bound as an output, copied to the CPU);
// Unsupported without the CUDA backend.
Status copy_gpu_to_host(void* dst, const void* src, size_t bytes);

}  // namespace ucudnn::python
