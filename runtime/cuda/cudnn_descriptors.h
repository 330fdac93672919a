// RAII holders for cuDNN descriptors, and helpers that fill tensor, filter and
// convolution descriptors from our row-major shapes and window geometry.
//
// Note [cuDNN rank]: cuDNN's Nd tensor descriptors need at least 4 dims, so
// shapes of rank < 4 are padded with trailing 1s ([N, C, L] → [N, C, L, 1]),
// which leaves the memory layout unchanged.
#pragma once

#include <cudnn.h>

#include <string>
#include <vector>

#include "runtime/core/shape.h"
#include "runtime/core/status.h"
#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/cuda_context.h"
#include "runtime/ops/window_geometry.h"

namespace ucudnn::cuda {

template <typename T, cudnnStatus_t (*Create)(T*), cudnnStatus_t (*Destroy)(T)>
class CudnnDescriptor {
 public:
  CudnnDescriptor() = default;
  ~CudnnDescriptor() {
    if (handle_) Destroy(handle_);
  }
  CudnnDescriptor(const CudnnDescriptor&) = delete;
  CudnnDescriptor& operator=(const CudnnDescriptor&) = delete;
  // Creates the descriptor (once); `context` names the node for errors.
  Status create(const std::string& context) {
    if (handle_ == nullptr) UCUDNN_CUDNN_CHECK(Create(&handle_), context);
    return Status::ok();
  }
  T get() const { return handle_; }

 private:
  T handle_ = nullptr;
};

using TensorDescriptor =
    CudnnDescriptor<cudnnTensorDescriptor_t, cudnnCreateTensorDescriptor, cudnnDestroyTensorDescriptor>;
using FilterDescriptor =
    CudnnDescriptor<cudnnFilterDescriptor_t, cudnnCreateFilterDescriptor, cudnnDestroyFilterDescriptor>;
using ConvolutionDescriptor = CudnnDescriptor<cudnnConvolutionDescriptor_t, cudnnCreateConvolutionDescriptor,
                                              cudnnDestroyConvolutionDescriptor>;
using PoolingDescriptor =
    CudnnDescriptor<cudnnPoolingDescriptor_t, cudnnCreatePoolingDescriptor, cudnnDestroyPoolingDescriptor>;
using ActivationDescriptor = CudnnDescriptor<cudnnActivationDescriptor_t, cudnnCreateActivationDescriptor,
                                             cudnnDestroyActivationDescriptor>;
using LrnDescriptor = CudnnDescriptor<cudnnLRNDescriptor_t, cudnnCreateLRNDescriptor, cudnnDestroyLRNDescriptor>;

// `shape` padded to at least 4 dims (Note [cuDNN rank]), as ints.
std::vector<int> cudnn_dims(const Shape& shape);

// Creates and fills a packed float32 tensor descriptor for `shape`. With
// `channels_last`, `shape` is 4-D in cuDNN's dim order [N, C, H, W] and the
// memory is NHWC (Note [channels-last], runtime/ir/layout.h).
Status set_tensor_descriptor(TensorDescriptor& desc, const Shape& shape, const std::string& context,
                             bool channels_last = false);

// The descriptors every convolution direction shares (runtime/cuda/conv.cc, conv_grad.cc).
// A float32 filter descriptor for `w` in cuDNN's dim order [K, C, R, S] (padded to 4 dims, Note
// [cuDNN rank]); with `channels_last` its memory is KRSC.
Status set_filter_descriptor(FilterDescriptor& desc, const Shape& w, const std::string& context,
                             bool channels_last = false);
// A float32 cross-correlation of `g`'s strides and dilations with cuDNN's one pad per axis `pads`
// (Note [conv asymmetric padding]), `group` groups and the math type of Note [conv math type].
Status set_convolution_descriptor(ConvolutionDescriptor& desc, std::vector<int> pads, const WindowGeometry& g,
                                  int64_t group, MathMode math, const std::string& context);

}  // namespace ucudnn::cuda
