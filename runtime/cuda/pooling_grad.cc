// STUB (training bring-up): CUDA kernels of MaxPoolGrad, AveragePoolGrad (none yet).
#include "runtime/cuda/cuda_kernel.h"

namespace ucudnn::cuda {

const CudaKernel& cuda_kernel_MaxPoolGrad() {
  static const CudaKernel k{};
  return k;
}

const CudaKernel& cuda_kernel_AveragePoolGrad() {
  static const CudaKernel k{};
  return k;
}

}  // namespace ucudnn::cuda
