// Error checks around CUDA, cuDNN and cuBLAS calls: each failure becomes a
// Status (kDeviceError, or kOutOfMemory for allocation failures) whose message
// names the call, the library's own error text and a caller-given context —
// the node, op and shapes (PrepareArgs::describe()), so a failing cuDNN call
// in ResNet's 40th convolution says which one.
//
// The context expression is evaluated only when the call fails.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <string>

#include "runtime/core/status.h"

namespace ucudnn::cuda {

Status cuda_error(cudaError_t error, const char* call, const std::string& context);
Status cudnn_error(cudnnStatus_t status, const char* call, const std::string& context);
Status cublas_error(cublasStatus_t status, const char* call, const std::string& context);

}  // namespace ucudnn::cuda

#define UCUDNN_CUDA_CHECK(call, context)                                                \
  do {                                                                                  \
    cudaError_t _ucudnn_cuda_error = (call);                                            \
    if (_ucudnn_cuda_error != cudaSuccess)                                              \
      return ::ucudnn::cuda::cuda_error(_ucudnn_cuda_error, #call, (context));          \
  } while (0)

#define UCUDNN_CUDNN_CHECK(call, context)                                               \
  do {                                                                                  \
    cudnnStatus_t _ucudnn_cudnn_status = (call);                                        \
    if (_ucudnn_cudnn_status != CUDNN_STATUS_SUCCESS)                                   \
      return ::ucudnn::cuda::cudnn_error(_ucudnn_cudnn_status, #call, (context));       \
  } while (0)

#define UCUDNN_CUBLAS_CHECK(call, context)                                              \
  do {                                                                                  \
    cublasStatus_t _ucudnn_cublas_status = (call);                                      \
    if (_ucudnn_cublas_status != CUBLAS_STATUS_SUCCESS)                                 \
      return ::ucudnn::cuda::cublas_error(_ucudnn_cublas_status, #call, (context));     \
  } while (0)
