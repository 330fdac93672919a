// STUB (training bring-up): CUDA kernels of SgdUpdate, AdamWUpdate (none yet).
#include "runtime/cuda/cuda_kernel.h"

namespace ucudnn::cuda {

const CudaKernel& cuda_kernel_SgdUpdate() {
  static const CudaKernel k{};
  return k;
}

const CudaKernel& cuda_kernel_AdamWUpdate() {
  static const CudaKernel k{};
  return k;
}

}  // namespace ucudnn::cuda
