// The backends by device, for the api: it makes its backends, sets the CPU's threads and holds
// GpuTensor's device memory through this header, which includes no backend's headers (backends.cc
// does), so nothing in api/ includes runtime/cpu or runtime/cuda. The optimizer's benchmarkers
// (optimizer/bench/*benchmarker*) and the importer's constant folding (a plain CPU backend,
// onnx_import/constant_folding.cc) make their own.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "runtime/backend/backend.h"
#include "runtime/core/status.h"

namespace ucudnn::cpu {
class ThreadsOfThisThread;
}  // namespace ucudnn::cpu

namespace ucudnn::backends {

enum class DeviceKind { kCpu, kCuda };
// The GPU's math: TF32 allowed, or strict FP32.
enum class GpuMath { kTf32, kFp32 };

// True when this build has the CUDA backend and a GPU is present.
bool cuda_available();

// The CPU backend, or the CUDA backend on GPU 0 with `math`; Unsupported saying why when the
// build has no CUDA backend or no GPU is present.
Expected<std::unique_ptr<runtime::Backend>> make_backend(DeviceKind device, GpuMath math);

// The CPU backend's threads (runtime/cpu/cpu_kernel.h, Note [pinned threads] in cpu_registry.cc):
// the count kernels use (set_num_threads(0): all the process's CPUs), and pinning.
int num_threads();
void set_num_threads(int n);
Status pin_threads(bool pin);

// While alive, the calling thread's CPU kernels use `n` threads whatever the session's count
// (cpu::ThreadsOfThisThread; Note [batch groups], optimizer/batch_groups.h).
class ThreadsOfThisThread {
 public:
  explicit ThreadsOfThisThread(int n);
  ~ThreadsOfThisThread();
  ThreadsOfThisThread(const ThreadsOfThisThread&) = delete;
  ThreadsOfThisThread& operator=(const ThreadsOfThisThread&) = delete;

 private:
  std::unique_ptr<cpu::ThreadsOfThisThread> scope_;
};

// GPU memory outside any backend (GpuTensor, include/ucudnn/ucudnn.h), on the current device.
// True when this build has the CUDA backend (the functions below then work; else Unsupported).
bool has_gpu_memory();
// `bytes` of zero-filled device memory, freed with the buffer; allocation failures name `what`
// and the sizes, the clearing "clearing <what>".
Expected<std::unique_ptr<runtime::Buffer>> allocate_gpu_memory(size_t bytes, const std::string& what);
// Copies `bytes` from host memory to the device and waits until they have landed; `context` ends
// the error message.
Status copy_to_gpu(void* dst, const void* src, size_t bytes, const std::string& context);
// Copies `bytes` from the device to host memory; complete on return. `context` ends the error message.
Status copy_from_gpu(void* dst, const void* src, size_t bytes, const std::string& context);

}  // namespace ucudnn::backends
