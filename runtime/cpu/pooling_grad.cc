// STUB (training bring-up): CPU kernels of MaxPoolGrad, AveragePoolGrad.
#include "runtime/cpu/cpu_kernel.h"

namespace ucudnn::cpu {

const CpuKernel& cpu_kernel_MaxPoolGrad() {
  static const CpuKernel k{.run = [](const KernelArgs& a) { return unsupported(a.node.describe() + ": not implemented yet"); }};
  return k;
}

const CpuKernel& cpu_kernel_AveragePoolGrad() {
  static const CpuKernel k{.run = [](const KernelArgs& a) { return unsupported(a.node.describe() + ": not implemented yet"); }};
  return k;
}

}  // namespace ucudnn::cpu
