// TopK(X, K) (opsets 10 and 11; 1's K attribute is not imported): along `axis`, the K largest (largest = 1)
// or smallest elements of X and their int64 indices, best first; equal values in index order (the spec's
// rule for sorted output, kept for sorted = 0 too), NaN above every number (as PyTorch's topk). X float32, int32 or int64; K a constant, 0 <= K <= the
// axis's size. What the shape rule and both backends share: K, read from its input.
#pragma once

#include <cstdint>

#include "runtime/core/status.h"
#include "runtime/core/tensor.h"

namespace ucudnn {

// K from its one-element int64 input, checked against the axis's size.
Expected<int64_t> top_k_count(const Tensor& k, int64_t axis_size);

}  // namespace ucudnn
