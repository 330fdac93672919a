// Range and EyeLike: ops whose output follows from values and shapes known when the model is loaded (Range's
// start, limit and delta must be constants; EyeLike reads only its input's shape). The shape rule, the CPU
// kernel and the CUDA kernel all compute the output with these functions; constant folding makes most of
// them initializers, and a kernel runs only for outputs too large to fold.
#pragma once

#include <string>

#include "runtime/core/status.h"
#include "runtime/core/tensor.h"

namespace ucudnn {

// Range(start, limit, delta) (opset 11): numpy's arange, start + i · delta for i = 0 .. n - 1 with
// n = max(ceil((limit - start) / delta), 0); scalars of float32, int32 or int64, all of one dtype. `where`
// names the node in errors (a zero delta, a count past 2^31 elements).
Expected<int64_t> range_count(const Tensor& start, const Tensor& limit, const Tensor& delta, const std::string& where);
Expected<Tensor> range_values(const Tensor& start, const Tensor& limit, const Tensor& delta, const std::string& where);

// EyeLike (opset 9): a 2-D tensor of `shape` and `dtype` (any ucudnn dtype) with ones on the
// diagonal k (k > 0 above the main one, k < 0 below) and zeros elsewhere.
Expected<Tensor> eye_like_values(const Shape& shape, DType dtype, int64_t k);

}  // namespace ucudnn
