// TopK's CUDA kernel (contract: top_k_kernels.h). The order taken: a before b when a's value is better
// (larger, or smaller with largest = 0), or equal with a smaller index; pass r takes the first element in
// that order after pass r - 1's, so no line needs scratch memory. O(k · length) per line: made for the small
// k of a classifier's top-5, correct for any.
#include <cstdint>
#include <type_traits>

#include "runtime/core/dtype.h"
#include "runtime/cuda/grid_loop.cuh"
#include "runtime/cuda/top_k_kernels.h"

namespace ucudnn::cuda {

namespace {

template <typename T>
__device__ __forceinline__ bool before(T va, int64_t a, T vb, int64_t b, bool largest) {
  if constexpr (std::is_floating_point_v<T>) {  // NaN above every number, as the CPU's
    const bool na = isnan(va), nb = isnan(vb);
    if (na || nb) return na && nb ? a < b : largest ? na : nb;
  }
  if (va != vb) return largest ? va > vb : va < vb;
  return a < b;
}

template <typename T>
__global__ void top_k_kernel(const T* src, T* values, int64_t* indices, int64_t outer, int64_t length, int64_t inner,
                             int64_t k, bool largest) {
  UCUDNN_GRID_LOOP(line, outer * inner) {
    const int64_t o = line / inner, in = line % inner;
    const T* x = src + o * length * inner + in;
    int64_t taken = -1;
    for (int64_t r = 0; r < k; ++r) {
      int64_t best = -1;
      for (int64_t j = 0; j < length; ++j) {
        if (taken >= 0 && !before(x[taken * inner], taken, x[j * inner], j, largest)) continue;  // not after it
        if (best < 0 || before(x[j * inner], j, x[best * inner], best, largest)) best = j;
      }
      const int64_t at = (o * k + r) * inner + in;
      values[at] = x[best * inner];
      if (indices != nullptr) indices[at] = best;
      taken = best;
    }
  }
}

template <typename T>
cudaError_t queue(const void* src, void* values, int64_t* indices, int64_t outer, int64_t length, int64_t inner,
                  int64_t k, bool largest, cudaStream_t stream) {
  top_k_kernel<T><<<blocks_for(outer * inner), kThreads, 0, stream>>>(
      static_cast<const T*>(src), static_cast<T*>(values), indices, outer, length, inner, k, largest);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_top_k(int dtype, const void* src, void* values, int64_t* indices, int64_t outer, int64_t length,
                         int64_t inner, int64_t k, bool largest, cudaStream_t stream) {
  if (outer * inner * k == 0) return cudaSuccess;
  switch (static_cast<DType>(dtype)) {
    case DType::kFloat32: return queue<float>(src, values, indices, outer, length, inner, k, largest, stream);
    case DType::kInt32: return queue<int32_t>(src, values, indices, outer, length, inner, k, largest, stream);
    case DType::kInt64: return queue<int64_t>(src, values, indices, outer, length, inner, k, largest, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace ucudnn::cuda
