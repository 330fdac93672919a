// STUB (training bring-up): CUDA kernels of ConvGradData, ConvGradFilter (none yet).
#include "runtime/cuda/cuda_kernel.h"

namespace ucudnn::cuda {

const CudaKernel& cuda_kernel_ConvGradData() {
  static const CudaKernel k{};
  return k;
}

const CudaKernel& cuda_kernel_ConvGradFilter() {
  static const CudaKernel k{};
  return k;
}

}  // namespace ucudnn::cuda
