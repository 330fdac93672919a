// make_backend, cuda_available and apply_cpu_thread_options (see device.h), over the backends
// by device (runtime/backends/backends.h).
#include "api/device.h"

#include "runtime/backends/backends.h"

namespace ucudnn {

bool cuda_available() { return backends::cuda_available(); }

Expected<std::unique_ptr<runtime::Backend>> make_backend(Device device, Math math) {
  return backends::make_backend(device == Device::kCpu ? backends::DeviceKind::kCpu : backends::DeviceKind::kCuda,
                                math == Math::kFp32 ? backends::GpuMath::kFp32 : backends::GpuMath::kTf32);
}

Status apply_cpu_thread_options(const SessionOptions& options) {
  backends::set_num_threads(options.threads);
  return backends::pin_threads(options.pin_threads);  // check_options refused pinning off the CPU
}

}  // namespace ucudnn
