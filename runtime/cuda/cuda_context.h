// CudaContext: one GPU, one stream, one cuDNN and one cuBLAS handle, and the
// math setting (TF32 allowed or strict FP32) every kernel of a session uses.
//
// A session owns one context; contexts on different threads are independent
// (cuDNN and cuBLAS handles are not shared). All work is queued on stream();
// nothing in a context synchronises except synchronize().
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <memory>
#include <string>

#include "runtime/core/status.h"

namespace ucudnn::cuda {

enum class MathMode {
  kTf32,  // TF32 tensor cores allowed for FP32 convolutions and GEMMs (PyTorch's default)
  kFp32,  // strict FP32: FMA math only
};

// Number of usable CUDA devices; 0 when there is no GPU or no driver.
int device_count();

class CudaContext {
 public:
  // Selects `device`, creates the stream and the handles, binds them to the stream.
  static Expected<std::unique_ptr<CudaContext>> create(int device = 0, MathMode math = MathMode::kTf32);
  ~CudaContext();
  CudaContext(const CudaContext&) = delete;
  CudaContext& operator=(const CudaContext&) = delete;

  int device() const { return device_; }
  MathMode math() const { return math_; }
  cudaStream_t stream() const { return stream_; }
  cudnnHandle_t cudnn() const { return cudnn_; }
  cublasHandle_t cublas() const { return cublas_; }
  // "NVIDIA H200 (sm_90, 139 GiB)".
  const std::string& device_description() const { return description_; }

  // Waits for all queued work; reports an asynchronous kernel error with `context`.
  Status synchronize(const std::string& context) const;

 private:
  CudaContext() = default;
  int device_ = 0;
  MathMode math_ = MathMode::kTf32;
  cudaStream_t stream_ = nullptr;
  cudnnHandle_t cudnn_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  std::string description_;
};

}  // namespace ucudnn::cuda
