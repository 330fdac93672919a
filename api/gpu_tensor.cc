// GpuTensor (include/ucudnn/ucudnn.h): device memory for Session::run_on_device.
// Compiled in every build so applications link the same API; without the CUDA
// backend the factories say so and no GpuTensor ever holds memory.
#include <utility>

#include "ucudnn/ucudnn.h"
#ifdef UCUDNN_HAVE_CUDA
#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/device_memory.h"
#endif

namespace ucudnn {

#ifdef UCUDNN_HAVE_CUDA
// DeviceBuffer already frees on destruction and words allocation failures
// (size asked for, free and total device memory).
struct GpuTensor::Memory {
  cuda::DeviceBuffer buffer;
};
#else
struct GpuTensor::Memory {};
#endif

GpuTensor::GpuTensor() = default;
GpuTensor::~GpuTensor() = default;
GpuTensor::GpuTensor(GpuTensor&& other) noexcept = default;
GpuTensor& GpuTensor::operator=(GpuTensor&& other) noexcept = default;

std::string GpuTensor::describe() const {
  return std::string(dtype_name(dtype_)) + shape_to_string(shape_) + " on the GPU";
}

#ifdef UCUDNN_HAVE_CUDA

void* GpuTensor::data() const { return memory_ ? memory_->buffer.data() : nullptr; }

Expected<GpuTensor> GpuTensor::allocate(DType dtype, Shape shape) {
  if (dtype == DType::kUndefined) return invalid_argument("GpuTensor::allocate: the dtype is undefined");
  for (int64_t d : shape)
    if (d < 0) return invalid_argument("GpuTensor::allocate: negative dimension in " + shape_to_string(shape));
  GpuTensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.memory_ = std::make_unique<Memory>();
  UCUDNN_ASSIGN_OR_RETURN(t.memory_->buffer, cuda::DeviceBuffer::allocate(t.nbytes(), "GPU tensor " + t.describe()));
  // Zero-filled like Tensor::allocate, so an output never read back uninitialised memory.
  if (t.nbytes() > 0)
    UCUDNN_CUDA_CHECK(cudaMemset(t.data(), 0, t.nbytes()), "clearing GPU tensor " + t.describe());
  return t;
}

Expected<GpuTensor> GpuTensor::upload(const Tensor& host) {
  if (host.empty()) return invalid_argument("GpuTensor::upload: " + host.describe() + " holds no data");
  UCUDNN_ASSIGN_OR_RETURN(GpuTensor t, allocate(host.dtype(), host.shape()));
  if (t.nbytes() == 0) return t;
  UCUDNN_CUDA_CHECK(cudaMemcpy(t.data(), host.raw(), t.nbytes(), cudaMemcpyHostToDevice),
                    "uploading " + host.describe() + " to the GPU");
  // From pageable memory cudaMemcpy may return before the DMA lands; sessions
  // run on their own non-blocking stream, which would not wait for it.
  UCUDNN_CUDA_CHECK(cudaDeviceSynchronize(), "uploading " + host.describe() + " to the GPU");
  return t;
}

Expected<Tensor> GpuTensor::download() const {
  UCUDNN_ASSIGN_OR_RETURN(Tensor host, Tensor::allocate(dtype_, shape_));
  if (nbytes() > 0)  // to pageable memory cudaMemcpy returns only once the copy is complete
    UCUDNN_CUDA_CHECK(cudaMemcpy(host.raw(), data(), nbytes(), cudaMemcpyDeviceToHost),
                      "downloading " + describe());
  return host;
}

#else  // no CUDA backend in this build

namespace {
Status no_cuda(const char* what) {
  return unsupported(std::string(what) + ": this build of ucudnn has no CUDA backend");
}
}  // namespace

void* GpuTensor::data() const { return nullptr; }
Expected<GpuTensor> GpuTensor::allocate(DType, Shape) { return no_cuda("GpuTensor::allocate"); }
Expected<GpuTensor> GpuTensor::upload(const Tensor&) { return no_cuda("GpuTensor::upload"); }
Expected<Tensor> GpuTensor::download() const { return no_cuda("GpuTensor::download"); }

#endif

}  // namespace ucudnn
