// Helpers shared by the CUDA kernels of elementwise and data-movement ops:
// building a StridedLayout (kernels.h) from shapes; reading an integer input's
// values on the host.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/core/shape.h"
#include "runtime/cuda/cuda_kernel.h"
#include "runtime/cuda/kernels.h"

namespace ucudnn::cuda {

// Layout of `out` reading operand `which` of shape `operand` broadcast to it
// (right-aligned; stride 0 on broadcast dims). False when rank > kMaxDims.
bool set_broadcast_layout(const Shape& out, const Shape& operand, int which, StridedLayout* layout);

// The values of an int32/int64 device tensor, copied on ctx's stream and waited for: a host
// sync, for the values a kernel must refuse (Note [values checked on the host], elementwise.cc).
Expected<std::vector<int64_t>> read_ints_to_host(const DeviceTensor& src, CudaContext& ctx);

}  // namespace ucudnn::cuda
