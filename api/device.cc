// make_backend, cuda_available and apply_cpu_thread_options (see device.h): the api file that
// creates backends by device, so the one that includes the backends' headers (with gpu_tensor.cc).
#include "api/device.h"

#include "runtime/cpu/cpu_backend.h"
#include "runtime/cpu/cpu_kernel.h"
#ifdef UCUDNN_HAVE_CUDA
#include "runtime/cuda/cuda_backend.h"
#include "runtime/cuda/cuda_context.h"
#endif

namespace ucudnn {

#ifdef UCUDNN_HAVE_CUDA
bool cuda_available() { return cuda::device_count() > 0; }
#else
bool cuda_available() { return false; }  // built without the CUDA backend
#endif

Expected<std::unique_ptr<runtime::Backend>> make_backend(Device device, Math math) {
  if (device == Device::kCpu) return cpu::make_cpu_backend();
#ifdef UCUDNN_HAVE_CUDA
  if (!cuda_available()) return unsupported("device 'cuda' is not available: no CUDA device is present (or no driver)");
  return cuda::make_cuda_backend(0, math == Math::kFp32 ? cuda::MathMode::kFp32 : cuda::MathMode::kTf32);
#else
  (void)math;
  return unsupported("device 'cuda' is not available: this build of ucudnn has no CUDA backend");
#endif
}

Status apply_cpu_thread_options(const SessionOptions& options) {
  cpu::set_num_threads(options.threads);
  return cpu::pin_threads(options.pin_threads);  // check_options refused pinning off the CPU
}

}  // namespace ucudnn
