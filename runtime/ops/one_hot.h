// OneHot's depth, checked by its shape rule (one_hot.cc) and read by its lowering (onnx_import/lowering/one_hot.h).
#pragma once

#include <cstdint>

#include "runtime/core/status.h"
#include "runtime/core/tensor.h"

namespace ucudnn {

// The value of `depth` (OneHot's input 1): a scalar or one-element tensor of any numeric dtype, a float one
// truncated; InvalidArgument for more than one value or a float that is not a size.
Expected<int64_t> one_hot_depth(const Tensor& depth);

}  // namespace ucudnn
