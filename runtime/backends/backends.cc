// The backends by device (see backends.h): the CPU's always, the CUDA backend's in CUDA builds.
#include "runtime/backends/backends.h"

#include <utility>

#include "runtime/cpu/cpu_backend.h"
#include "runtime/cpu/cpu_kernel.h"
#ifdef UCUDNN_HAVE_CUDA
#include "runtime/cuda/cuda_backend.h"
#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/cuda_context.h"
#include "runtime/cuda/device_memory.h"
#endif

namespace ucudnn::backends {

#ifdef UCUDNN_HAVE_CUDA
bool cuda_available() { return cuda::device_count() > 0; }
#else
bool cuda_available() { return false; }  // built without the CUDA backend
#endif

Expected<std::unique_ptr<runtime::Backend>> make_backend(DeviceKind device, GpuMath math) {
  if (device == DeviceKind::kCpu) return cpu::make_cpu_backend();
#ifdef UCUDNN_HAVE_CUDA
  if (!cuda_available()) return unsupported("device 'cuda' is not available: no CUDA device is present (or no driver)");
  return cuda::make_cuda_backend(0, math == GpuMath::kFp32 ? cuda::MathMode::kFp32 : cuda::MathMode::kTf32);
#else
  (void)math;
  return unsupported("device 'cuda' is not available: this build of ucudnn has no CUDA backend");
#endif
}

int num_threads() { return cpu::num_threads(); }
void set_num_threads(int n) { cpu::set_num_threads(n); }
Status pin_threads(bool pin) { return cpu::pin_threads(pin); }

ThreadsOfThisThread::ThreadsOfThisThread(int n) : scope_(std::make_unique<cpu::ThreadsOfThisThread>(n)) {}
ThreadsOfThisThread::~ThreadsOfThisThread() = default;

#ifdef UCUDNN_HAVE_CUDA

namespace {

// DeviceBuffer already frees on destruction and words allocation failures
// (size asked for, free and total device memory).
class GpuMemory : public runtime::Buffer {
 public:
  explicit GpuMemory(cuda::DeviceBuffer buffer) : buffer_(std::move(buffer)) {}
  void* data() const override { return buffer_.data(); }
  size_t bytes() const override { return buffer_.bytes(); }

 private:
  cuda::DeviceBuffer buffer_;
};

}  // namespace

bool has_gpu_memory() { return true; }

Expected<std::unique_ptr<runtime::Buffer>> allocate_gpu_memory(size_t bytes, const std::string& what) {
  UCUDNN_ASSIGN_OR_RETURN(cuda::DeviceBuffer buffer, cuda::DeviceBuffer::allocate(bytes, what));
  // Zero-filled like Tensor::allocate, so an output never read back uninitialised memory.
  if (bytes > 0) UCUDNN_CUDA_CHECK(cudaMemset(buffer.data(), 0, bytes), "clearing " + what);
  return std::unique_ptr<runtime::Buffer>(std::make_unique<GpuMemory>(std::move(buffer)));
}

Status copy_to_gpu(void* dst, const void* src, size_t bytes, const std::string& context) {
  UCUDNN_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), context);
  // From pageable memory cudaMemcpy may return before the DMA lands; sessions
  // run on their own non-blocking stream, which would not wait for it.
  UCUDNN_CUDA_CHECK(cudaDeviceSynchronize(), context);
  return Status::ok();
}

Status copy_from_gpu(void* dst, const void* src, size_t bytes, const std::string& context) {
  // To pageable memory cudaMemcpy returns only once the copy is complete.
  UCUDNN_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), context);
  return Status::ok();
}

#else  // no CUDA backend in this build

namespace {
Status no_cuda(const char* what) {
  return unsupported(std::string(what) + ": this build of ucudnn has no CUDA backend");
}
}  // namespace

bool has_gpu_memory() { return false; }
Expected<std::unique_ptr<runtime::Buffer>> allocate_gpu_memory(size_t, const std::string&) {
  return no_cuda("allocate_gpu_memory");
}
Status copy_to_gpu(void*, const void*, size_t, const std::string&) { return no_cuda("copy_to_gpu"); }
Status copy_from_gpu(void*, const void*, size_t, const std::string&) { return no_cuda("copy_from_gpu"); }

#endif

}  // namespace ucudnn::backends
