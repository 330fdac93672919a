// STUB (training bring-up): CUDA kernels of SoftmaxGrad, LogSoftmaxGrad, SoftmaxCrossEntropyLoss, SoftmaxCrossEntropyLossGrad, ReduceSum, Expand (none yet).
#include "runtime/cuda/cuda_kernel.h"

namespace ucudnn::cuda {

const CudaKernel& cuda_kernel_SoftmaxGrad() {
  static const CudaKernel k{};
  return k;
}

const CudaKernel& cuda_kernel_LogSoftmaxGrad() {
  static const CudaKernel k{};
  return k;
}

const CudaKernel& cuda_kernel_SoftmaxCrossEntropyLoss() {
  static const CudaKernel k{};
  return k;
}

const CudaKernel& cuda_kernel_SoftmaxCrossEntropyLossGrad() {
  static const CudaKernel k{};
  return k;
}

const CudaKernel& cuda_kernel_ReduceSum() {
  static const CudaKernel k{};
  return k;
}

const CudaKernel& cuda_kernel_Expand() {
  static const CudaKernel k{};
  return k;
}

}  // namespace ucudnn::cuda
