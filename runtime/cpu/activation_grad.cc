// STUB (training bring-up): CPU kernels of ActivationGrad, PReluGrad, DropoutTrain.
#include "runtime/cpu/cpu_kernel.h"

namespace ucudnn::cpu {

const CpuKernel& cpu_kernel_ActivationGrad() {
  static const CpuKernel k{.run = [](const KernelArgs& a) { return unsupported(a.node.describe() + ": not implemented yet"); }};
  return k;
}

const CpuKernel& cpu_kernel_PReluGrad() {
  static const CpuKernel k{.run = [](const KernelArgs& a) { return unsupported(a.node.describe() + ": not implemented yet"); }};
  return k;
}

const CpuKernel& cpu_kernel_DropoutTrain() {
  static const CpuKernel k{.run = [](const KernelArgs& a) { return unsupported(a.node.describe() + ": not implemented yet"); }};
  return k;
}

}  // namespace ucudnn::cpu
