// Trilu and CumSum: a triangle of the last two dims, and running sums along one axis. What the shape
// rules and both backends share: the diagonal and the axis, read from their constant inputs.
//
//   Trilu(X, k) (opset 14): X's elements (..., i, j) where j - i >= k (upper = 1) or j - i <= k (upper = 0),
//     zeros elsewhere; any dtype, rank >= 2; k a constant int64 scalar (0 when absent).
//   CumSum(X, axis) (opset 11): Y[..., i, ...] = the sum of X[..., j, ...] over j <= i (j < i with
//     exclusive = 1; j >= i, or j > i, with reverse = 1); float32, int32 or int64; axis a constant scalar.
#pragma once

#include <cstdint>

#include "runtime/core/status.h"
#include "runtime/core/tensor.h"

namespace ucudnn {

// Trilu's diagonal offset from its k input (nullptr: absent, 0).
Expected<int64_t> trilu_diagonal(const Tensor* k);
// CumSum's axis in [0, rank) from its axis input.
Expected<int64_t> cumsum_axis(const Tensor& axis, int64_t rank);

}  // namespace ucudnn
