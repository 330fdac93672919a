// The CPU's backward convolutions (ConvGradData, ConvGradFilter; runtime/cpu/conv_grad.cc):
// their algorithm ids, which the optimizer times and chooses like the forward ones.
#pragma once

namespace ucudnn::cpu {

// STUB (training bring-up): the owner of conv_grad.cc sets the real counts.
inline constexpr int kNumCpuConvGradDataAlgorithms = 1;
inline constexpr int kNumCpuConvGradFilterAlgorithms = 1;

}  // namespace ucudnn::cpu
