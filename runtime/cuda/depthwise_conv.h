// UCUDNN_DEPTHWISE: ucudnn's own forward algorithm for depthwise convolutions, beside cuDNN's.
//
// cuDNN's legacy API runs depthwise convolutions in NHWC 2–3× slower than in NCHW, so a
// channels-last network (MobileNet, EfficientNet) loses its tensor-core convolutions elsewhere
// to keep its depthwise ones fast. This algorithm is one more forward algorithm id of Conv on
// the CUDA backend, after cuDNN's CUDNN_CONVOLUTION_FWD_ALGO_* (0..7): the benchmarker times it
// like cuDNN's (optimizer/bench/cudnn_benchmarker.cc), the database stores it, the DP and the
// ILP pick it when it is fastest. It needs no workspace.
//
// It applies to a float32 2-D Conv with group = C_in (one input channel a group) in either layout
// (Note [channels-last]), any window, pads, strides and dilations, any channel multiplier
// K / C_in, with the fused epilogue of Note [fused nodes] (bias, residual z, Relu). Preparing it
// for any other Conv answers Unsupported, as an algorithm cuDNN does not have for a problem.
// Kernels: runtime/cuda/depthwise_conv_kernels.h.
#pragma once

#include <memory>

#include "runtime/cuda/cuda_kernel.h"

namespace ucudnn::cuda {

// The forward algorithm id of UCUDNN_DEPTHWISE (optimizer/kernel_key.h's kUcudnnDepthwiseAlgorithm;
// optimizer/bench/cudnn_benchmarker.cc asserts they are equal).
inline constexpr int kDepthwiseForwardAlgorithm = 8;
// Conv's forward algorithm ids on the CUDA backend: cuDNN's, then UCUDNN_DEPTHWISE.
inline constexpr int kForwardAlgorithmCount = kDepthwiseForwardAlgorithm + 1;

// Conv's prepare for algorithm kDepthwiseForwardAlgorithm (runtime/cuda/conv.cc dispatches it):
// the kernel state, or Unsupported naming the node and why the algorithm does not apply.
Expected<std::unique_ptr<KernelState>> prepare_depthwise_conv(const PrepareArgs& args);

}  // namespace ucudnn::cuda
