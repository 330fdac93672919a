// STUB (training bring-up): CPU kernels of SoftmaxGrad, LogSoftmaxGrad, SoftmaxCrossEntropyLoss, SoftmaxCrossEntropyLossGrad, ReduceSum, Expand.
#include "runtime/cpu/cpu_kernel.h"

namespace ucudnn::cpu {

const CpuKernel& cpu_kernel_SoftmaxGrad() {
  static const CpuKernel k{.run = [](const KernelArgs& a) { return unsupported(a.node.describe() + ": not implemented yet"); }};
  return k;
}

const CpuKernel& cpu_kernel_LogSoftmaxGrad() {
  static const CpuKernel k{.run = [](const KernelArgs& a) { return unsupported(a.node.describe() + ": not implemented yet"); }};
  return k;
}

const CpuKernel& cpu_kernel_SoftmaxCrossEntropyLoss() {
  static const CpuKernel k{.run = [](const KernelArgs& a) { return unsupported(a.node.describe() + ": not implemented yet"); }};
  return k;
}

const CpuKernel& cpu_kernel_SoftmaxCrossEntropyLossGrad() {
  static const CpuKernel k{.run = [](const KernelArgs& a) { return unsupported(a.node.describe() + ": not implemented yet"); }};
  return k;
}

const CpuKernel& cpu_kernel_ReduceSum() {
  static const CpuKernel k{.run = [](const KernelArgs& a) { return unsupported(a.node.describe() + ": not implemented yet"); }};
  return k;
}

const CpuKernel& cpu_kernel_Expand() {
  static const CpuKernel k{.run = [](const KernelArgs& a) { return unsupported(a.node.describe() + ": not implemented yet"); }};
  return k;
}

}  // namespace ucudnn::cpu
