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

// The same loop over an index of the caller's type: uint32_t where fits_uint32_loop says so (its
// divisions cost far less than int64_t's).
#define UCUDNN_INDEX_LOOP(Index, i, n) \
  for (Index i = blockIdx.x * Index{blockDim.x} + threadIdx.x; i < (n); i += Index{blockDim.x} * gridDim.x)

namespace ucudnn::cuda {

// Whether a grid-stride loop over n elements, `per_thread` of them a thread each step, on blocks_for's
// grid stays below 2^32 with its last stride included: a uint32_t index is then enough.
inline bool fits_uint32_loop(int64_t n, int64_t per_thread = 1) {
  return n < (int64_t{1} << 32) - per_thread * kThreads * (int64_t{1} << 20);
}

}  // namespace ucudnn::cuda
