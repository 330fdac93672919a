// The Reduce* ops of ONNX as one family: what each element contributes to its output and how the
// contributions combine. Host and device code (the CUDA kernels include it too); the CPU and CUDA
// kernels and the test reference all switch on it.
//
//   kind         element  combine  result               over no elements
//   kSum         x        +        s                    0
//   kMean        x        +        s / count            NaN
//   kMax, kMin   x        max/min  m                    -inf / +inf
//   kProd        x        ·        p                    1
//   kL1          |x|      +        s                    0
//   kL2          x²       +        √s                   0
//   kSumSquare   x²       +        s                    0
//   kLogSum      x        +        log s                -inf
//   kLogSumExp   e^(x−m)  +        m + log s (m: max)   -inf
//
// A NaN element makes max and min NaN (as NumPy's); kLogSumExp subtracts the max first, so no term
// overflows, and gives the max itself when that is infinite or NaN.
#pragma once

#include <math.h>
#include <stdint.h>

#include "runtime/core/host_device.h"

namespace ucudnn {

enum class ReduceKind : int { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kSumSquare, kLogSum, kLogSumExp };

// An output from its reduction: `acc` the combined contributions (the sum, or the product), `count` the
// elements reduced, `extreme` their max (min for kMin; max and min use it alone, kLogSumExp as its shift).
UCUDNN_HOST_DEVICE inline float finish_reduction(ReduceKind kind, double acc, int64_t count, float extreme) {
  switch (kind) {
    case ReduceKind::kMean: return count == 0 ? NAN : static_cast<float>(acc / static_cast<double>(count));
    case ReduceKind::kMax:
    case ReduceKind::kMin: return extreme;
    case ReduceKind::kL2: return static_cast<float>(sqrt(acc));
    case ReduceKind::kLogSum: return static_cast<float>(log(acc));
    case ReduceKind::kLogSumExp:
      // Over no elements, or an infinite or NaN max, the max itself (-inf, +inf, NaN).
      return extreme != extreme || extreme == INFINITY || extreme == -INFINITY
                 ? extreme
                 : static_cast<float>(static_cast<double>(extreme) + log(acc));
    default: return static_cast<float>(acc);
  }
}

}  // namespace ucudnn

#undef UCUDNN_HOST_DEVICE
