// The launch shape every elementwise-style kernel of runtime/cuda uses: blocks of
// kThreads threads, at most 2^20 blocks, and a grid-stride loop over n elements
// (int64 indices, so tensors past 2^31 elements are covered).
#pragma once

#include <cstdint>

namespace ucudnn::cuda {

constexpr int kThreads = 256;

// Blocks for n elements: ceil(n / kThreads), at least 1, at most 2^20 (the loop strides over the rest).
inline unsigned blocks_for(int64_t n) {
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < (int64_t{1} << 20) ? (blocks > 0 ? blocks : 1) : (int64_t{1} << 20));
}

}  // namespace ucudnn::cuda

#define UCUDNN_GRID_LOOP(i, n) \
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < (n); i += int64_t{blockDim.x} * gridDim.x)
