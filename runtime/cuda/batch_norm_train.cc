// STUB (training bring-up): CUDA kernels of BatchNormTrain, BatchNormGrad (none yet).
#include "runtime/cuda/cuda_kernel.h"

namespace ucudnn::cuda {

const CudaKernel& cuda_kernel_BatchNormTrain() {
  static const CudaKernel k{};
  return k;
}

const CudaKernel& cuda_kernel_BatchNormGrad() {
  static const CudaKernel k{};
  return k;
}

}  // namespace ucudnn::cuda
