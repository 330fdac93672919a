// CudaContext, DeviceBuffer and the CUDA/cuDNN/cuBLAS error formatting.
#include "runtime/cuda/cuda_context.h"

#include <cstdio>

#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/device_memory.h"

namespace ucudnn::cuda {

namespace {

std::string join(const char* call, const std::string& text, const std::string& context) {
  std::string message = context.empty() ? std::string() : context + ": ";
  return message + call + " failed: " + text;
}

}  // namespace

Status cuda_error(cudaError_t error, const char* call, const std::string& context) {
  const std::string text = std::string(cudaGetErrorName(error)) + " (" + cudaGetErrorString(error) + ")";
  if (error == cudaErrorMemoryAllocation) return out_of_memory(join(call, text, context));
  return device_error(join(call, text, context));
}

Status cudnn_error(cudnnStatus_t status, const char* call, const std::string& context) {
  const std::string text = cudnnGetErrorString(status);
  if (status == CUDNN_STATUS_ALLOC_FAILED) return out_of_memory(join(call, text, context));
  // Note [cuDNN bad-param details]: cuDNN 9 keeps a more precise reason for the
  // last error (which dimension or stride it disliked); append it when present.
  char detail[512] = {0};
  cudnnGetLastErrorString(detail, sizeof(detail));
  return device_error(join(call, detail[0] ? text + " — " + detail : text, context));
}

Status cublas_error(cublasStatus_t status, const char* call, const std::string& context) {
  const std::string text = std::string(cublasGetStatusName(status)) + " (" + cublasGetStatusString(status) + ")";
  if (status == CUBLAS_STATUS_ALLOC_FAILED) return out_of_memory(join(call, text, context));
  return device_error(join(call, text, context));
}

int device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" error
    return 0;
  }
  return count;
}

Expected<std::unique_ptr<CudaContext>> CudaContext::create(int device, MathMode math) {
  const int count = device_count();
  if (count == 0) return device_error("no CUDA device is present (or the CUDA driver is missing)");
  if (device < 0 || device >= count)
    return invalid_argument("CUDA device " + std::to_string(device) + " does not exist (" + std::to_string(count) +
                            " present)");
  std::unique_ptr<CudaContext> ctx(new CudaContext());
  ctx->device_ = device;
  ctx->math_ = math;
  UCUDNN_CUDA_CHECK(cudaSetDevice(device), "selecting the GPU");
  cudaDeviceProp prop{};
  UCUDNN_CUDA_CHECK(cudaGetDeviceProperties(&prop, device), "reading the GPU's properties");
  ctx->description_ = std::string(prop.name) + " (sm_" + std::to_string(prop.major) + std::to_string(prop.minor) +
                      ", " + format_bytes(prop.totalGlobalMem) + ")";
  UCUDNN_CUDA_CHECK(cudaStreamCreateWithFlags(&ctx->stream_, cudaStreamNonBlocking), "creating the stream");
  UCUDNN_CUDNN_CHECK(cudnnCreate(&ctx->cudnn_), "creating the cuDNN handle (is libcudnn 9 on the library path?)");
  UCUDNN_CUDNN_CHECK(cudnnSetStream(ctx->cudnn_, ctx->stream_), "binding cuDNN to the stream");
  UCUDNN_CUBLAS_CHECK(cublasCreate(&ctx->cublas_), "creating the cuBLAS handle");
  UCUDNN_CUBLAS_CHECK(cublasSetStream(ctx->cublas_, ctx->stream_), "binding cuBLAS to the stream");
  // Note [cuBLAS math mode]: since CUDA 11, CUBLAS_DEFAULT_MATH never uses TF32
  // for FP32 GEMMs; TF32 must be asked for with CUBLAS_TF32_TENSOR_OP_MATH.
  // Strict FP32 uses CUBLAS_PEDANTIC_MATH, which also rules out reduced-precision
  // reductions. (Convolutions set theirs per descriptor: Note [conv math type].)
  UCUDNN_CUBLAS_CHECK(cublasSetMathMode(ctx->cublas_, math == MathMode::kTf32 ? CUBLAS_TF32_TENSOR_OP_MATH
                                                                              : CUBLAS_PEDANTIC_MATH),
                      "setting the cuBLAS math mode");
  return ctx;
}

CudaContext::~CudaContext() {
  if (cublas_) cublasDestroy(cublas_);
  if (cudnn_) cudnnDestroy(cudnn_);
  if (stream_) cudaStreamDestroy(stream_);
}

Status CudaContext::synchronize(const std::string& context) const {
  UCUDNN_CUDA_CHECK(cudaStreamSynchronize(stream_), context);
  UCUDNN_CUDA_CHECK(cudaGetLastError(), context);
  return Status::ok();
}

DeviceBuffer::~DeviceBuffer() {
  if (data_) cudaFree(data_);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept : data_(other.data_), bytes_(other.bytes_) {
  other.data_ = nullptr;
  other.bytes_ = 0;
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (data_) cudaFree(data_);
    data_ = other.data_;
    bytes_ = other.bytes_;
    other.data_ = nullptr;
    other.bytes_ = 0;
  }
  return *this;
}

Expected<DeviceBuffer> DeviceBuffer::allocate(size_t bytes, const std::string& what) {
  DeviceBuffer buffer;
  if (bytes == 0) return buffer;
  const cudaError_t error = cudaMalloc(&buffer.data_, bytes);
  if (error != cudaSuccess) {
    cudaGetLastError();
    buffer.data_ = nullptr;
    size_t free_bytes = 0, total_bytes = 0;
    cudaMemGetInfo(&free_bytes, &total_bytes);
    const std::string message = "cannot allocate the " + what + ": asked for " + format_bytes(bytes) + " (" +
                                std::to_string(bytes) + " bytes), " + format_bytes(free_bytes) + " free of " +
                                format_bytes(total_bytes) + " (" + cudaGetErrorName(error) + ")";
    return error == cudaErrorMemoryAllocation ? out_of_memory(message) : device_error(message);
  }
  buffer.bytes_ = bytes;
  return buffer;
}

}  // namespace ucudnn::cuda
