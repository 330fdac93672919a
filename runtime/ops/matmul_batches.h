// MatMul's batch broadcasting, shared by the CPU and CUDA kernels: which of A's
// and B's matrices each matrix of the output multiplies.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/core/shape.h"

namespace ucudnn {

// The matrices one output matrix multiplies: indices into A's and B's batches
// (row-major over `a_batch` and `b_batch`).
struct MatmulBatchPair {
  int64_t a = 0, b = 0;
};

// For every matrix of the broadcast batch of `a_batch` and `b_batch` (numpy rules:
// ranks right-aligned, size-1 dims repeat; the shape rule has checked that they
// broadcast), in row-major order, the pair of matrices it multiplies.
std::vector<MatmulBatchPair> matmul_batch_pairs(const Shape& a_batch, const Shape& b_batch);

}  // namespace ucudnn
