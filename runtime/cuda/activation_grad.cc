// STUB (training bring-up): CUDA kernels of ActivationGrad, PReluGrad, DropoutTrain (none yet).
#include "runtime/cuda/cuda_kernel.h"

namespace ucudnn::cuda {

const CudaKernel& cuda_kernel_ActivationGrad() {
  static const CudaKernel k{};
  return k;
}

const CudaKernel& cuda_kernel_PReluGrad() {
  static const CudaKernel k{};
  return k;
}

const CudaKernel& cuda_kernel_DropoutTrain() {
  static const CudaKernel k{};
  return k;
}

}  // namespace ucudnn::cuda
