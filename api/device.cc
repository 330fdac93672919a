// make_backend and cuda_available (see device.h).
#include "api/device.h"

#include "runtime/cpu/cpu_backend.h"
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

}  // namespace ucudnn
