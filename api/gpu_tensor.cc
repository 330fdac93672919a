// GpuTensor (include/ucudnn/ucudnn.h): device memory for Session::run_on_device.
// Compiled in every build so applications link the same API; without the CUDA
// backend the factories say so and no GpuTensor ever holds memory. The memory
// comes from runtime/backends/backends.h.
#include <utility>

#include "runtime/backends/backends.h"
#include "ucudnn/ucudnn.h"

namespace ucudnn {

namespace {
Status no_cuda(const char* what) {
  return unsupported(std::string(what) + ": this build of ucudnn has no CUDA backend");
}
}  // namespace

struct GpuTensor::Memory {
  std::unique_ptr<runtime::Buffer> buffer;  // zero-filled device memory (backends::allocate_gpu_memory)
};

GpuTensor::GpuTensor() = default;
GpuTensor::~GpuTensor() = default;
GpuTensor::GpuTensor(GpuTensor&& other) noexcept = default;
GpuTensor& GpuTensor::operator=(GpuTensor&& other) noexcept = default;

std::string GpuTensor::describe() const {
  return std::string(dtype_name(dtype_)) + shape_to_string(shape_) + " on the GPU";
}

void* GpuTensor::data() const { return memory_ ? memory_->buffer->data() : nullptr; }

Expected<GpuTensor> GpuTensor::allocate(DType dtype, Shape shape) {
  if (!backends::has_gpu_memory()) return no_cuda("GpuTensor::allocate");
  if (dtype == DType::kUndefined) return invalid_argument("GpuTensor::allocate: the dtype is undefined");
  for (int64_t d : shape)
    if (d < 0) return invalid_argument("GpuTensor::allocate: negative dimension in " + shape_to_string(shape));
  GpuTensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.memory_ = std::make_unique<Memory>();
  UCUDNN_ASSIGN_OR_RETURN(t.memory_->buffer, backends::allocate_gpu_memory(t.nbytes(), "GPU tensor " + t.describe()));
  return t;
}

Expected<GpuTensor> GpuTensor::upload(const Tensor& host) {
  if (!backends::has_gpu_memory()) return no_cuda("GpuTensor::upload");
  if (host.empty()) return invalid_argument("GpuTensor::upload: " + host.describe() + " holds no data");
  UCUDNN_ASSIGN_OR_RETURN(GpuTensor t, allocate(host.dtype(), host.shape()));
  if (t.nbytes() == 0) return t;
  UCUDNN_RETURN_IF_ERROR(
      backends::copy_to_gpu(t.data(), host.raw(), t.nbytes(), "uploading " + host.describe() + " to the GPU"));
  return t;
}

Expected<Tensor> GpuTensor::download() const {
  if (!backends::has_gpu_memory()) return no_cuda("GpuTensor::download");
  UCUDNN_ASSIGN_OR_RETURN(Tensor host, Tensor::allocate(dtype_, shape_));
  if (nbytes() > 0) UCUDNN_RETURN_IF_ERROR(backends::copy_from_gpu(host.raw(), data(), nbytes(), "downloading " + describe()));
  return host;
}

}  // namespace ucudnn
