// GatherElements', ScatterElements' and ScatterND's CUDA kernels (contracts: indexing_kernels.h). A scatter
// never has two threads write one place: ScatterElements' writes differ only along the axis, and one thread
// walks each line along it; ScatterND's slices are walked by one thread per slice element over every tuple.
// So repeated indices apply in the order of the indices, as on the CPU, and no atomics are needed.
#include <cstdint>
#include <type_traits>

#include "runtime/core/dtype.h"
#include "runtime/cuda/grid_loop.cuh"
#include "runtime/cuda/indexing_kernels.h"
#include "runtime/ops/scatter_reduction.h"

namespace ucudnn::cuda {

namespace {

__device__ __forceinline__ int64_t index_at(const void* indices, bool indices32, int64_t i, int64_t dim) {
  const int64_t v = indices32 ? static_cast<const int32_t*>(indices)[i] : static_cast<const int64_t*>(indices)[i];
  return v < 0 ? v + dim : v;
}

template <typename T, ScatterReduction R>
__device__ __forceinline__ void write(T* dst, int64_t at, T update) {
  if constexpr (R == ScatterReduction::kNone) {
    dst[at] = update;
  } else if constexpr (R == ScatterReduction::kAdd) {
    dst[at] = static_cast<T>(dst[at] + update);
  } else if constexpr (R == ScatterReduction::kMul) {
    dst[at] = static_cast<T>(dst[at] * update);
  } else if constexpr (R == ScatterReduction::kMax) {
    dst[at] = dst[at] < update ? update : dst[at];
  } else {
    dst[at] = update < dst[at] ? update : dst[at];
  }
}

template <typename T>
__global__ void gather_elements_kernel(const T* data, const void* indices, bool indices32, T* dst, int64_t n,
                                       ElementsGeometry g) {
  UCUDNN_GRID_LOOP(i, n) {
    int64_t from = 0, rest = i;
    for (int d = g.rank - 1; d >= 0; --d) {
      const int64_t c = rest % g.dims[d];
      rest /= g.dims[d];
      from += (d == g.axis ? index_at(indices, indices32, i, g.axis_dim) : c) * g.strides[d];
    }
    dst[i] = data[from];
  }
}

// Line l: the coordinates of indices but the axis; its elements are j · step apart in indices (and updates).
template <typename T, ScatterReduction R>
__global__ void scatter_elements_kernel(const void* indices, bool indices32, const T* updates, T* dst, int64_t lines,
                                        ElementsGeometry g) {
  int64_t step = 1;  // indices' element stride along the axis
  for (int d = g.rank - 1; d > g.axis; --d) step *= g.dims[d];
  UCUDNN_GRID_LOOP(l, lines) {
    int64_t first = 0, at = 0, rest = l, scale = 1;
    for (int d = g.rank - 1; d >= 0; --d) {
      if (d == g.axis) {
        scale *= g.dims[d];
        continue;
      }
      const int64_t c = rest % g.dims[d];
      rest /= g.dims[d];
      first += c * scale;
      at += c * g.strides[d];
      scale *= g.dims[d];
    }
    for (int64_t j = 0; j < g.dims[g.axis]; ++j) {
      const int64_t i = first + j * step;
      write<T, R>(dst, at + index_at(indices, indices32, i, g.axis_dim) * g.strides[g.axis], updates[i]);
    }
  }
}

template <typename T, ScatterReduction R>
__global__ void scatter_nd_kernel(const void* indices, bool indices32, const T* updates, T* dst, TupleGeometry g) {
  UCUDNN_GRID_LOOP(e, g.slice) {
    for (int64_t t = 0; t < g.tuples; ++t) {
      int64_t at = 0;
      for (int j = 0; j < g.k; ++j) at += index_at(indices, indices32, t * g.k + j, g.dims[j]) * g.strides[j];
      write<T, R>(dst, at + e, updates[t * g.slice + e]);
    }
  }
}

// Calls f with a null pointer of the element type the write needs (R's arithmetic, or bytes for kNone).
template <typename F>
cudaError_t with_type(int reduction, int dtype, size_t element_bytes, F f) {
  if (static_cast<ScatterReduction>(reduction) == ScatterReduction::kNone) {
    switch (element_bytes) {
      case 1: return f(static_cast<uint8_t*>(nullptr));
      case 2: return f(static_cast<uint16_t*>(nullptr));
      case 4: return f(static_cast<uint32_t*>(nullptr));
      case 8: return f(static_cast<uint64_t*>(nullptr));
      default: return cudaErrorInvalidValue;
    }
  }
  switch (static_cast<DType>(dtype)) {
    case DType::kFloat32: return f(static_cast<float*>(nullptr));
    case DType::kInt32: return f(static_cast<int32_t*>(nullptr));
    case DType::kInt64: return f(static_cast<int64_t*>(nullptr));
    default: return cudaErrorInvalidValue;
  }
}

// Calls f with R as a compile-time constant.
template <typename F>
cudaError_t with_reduction(int reduction, F f) {
  switch (static_cast<ScatterReduction>(reduction)) {
    case ScatterReduction::kNone: return f(std::integral_constant<ScatterReduction, ScatterReduction::kNone>());
    case ScatterReduction::kAdd: return f(std::integral_constant<ScatterReduction, ScatterReduction::kAdd>());
    case ScatterReduction::kMul: return f(std::integral_constant<ScatterReduction, ScatterReduction::kMul>());
    case ScatterReduction::kMax: return f(std::integral_constant<ScatterReduction, ScatterReduction::kMax>());
    case ScatterReduction::kMin: return f(std::integral_constant<ScatterReduction, ScatterReduction::kMin>());
  }
  return cudaErrorInvalidValue;
}

}  // namespace

cudaError_t launch_gather_elements(const void* data, const void* indices, bool indices32, void* dst,
                                   size_t element_bytes, int64_t n, const ElementsGeometry& g, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return with_type(0, 0, element_bytes, [&](auto* type) {
    using T = std::remove_pointer_t<decltype(type)>;
    gather_elements_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(static_cast<const T*>(data), indices, indices32,
                                                                      static_cast<T*>(dst), n, g);
    return cudaGetLastError();
  });
}

cudaError_t launch_scatter_elements(int reduction, int dtype, size_t element_bytes, const void* indices,
                                    bool indices32, const void* updates, void* dst, int64_t n,
                                    const ElementsGeometry& g, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  const int64_t lines = n / g.dims[g.axis];
  return with_type(reduction, dtype, element_bytes, [&](auto* type) {
    using T = std::remove_pointer_t<decltype(type)>;
    return with_reduction(reduction, [&](auto r) {
      scatter_elements_kernel<T, decltype(r)::value><<<blocks_for(lines), kThreads, 0, stream>>>(
          indices, indices32, static_cast<const T*>(updates), static_cast<T*>(dst), lines, g);
      return cudaGetLastError();
    });
  });
}

cudaError_t launch_scatter_nd(int reduction, int dtype, size_t element_bytes, const void* indices, bool indices32,
                              const void* updates, void* dst, const TupleGeometry& g, cudaStream_t stream) {
  if (g.tuples == 0 || g.slice == 0) return cudaSuccess;
  return with_type(reduction, dtype, element_bytes, [&](auto* type) {
    using T = std::remove_pointer_t<decltype(type)>;
    return with_reduction(reduction, [&](auto r) {
      scatter_nd_kernel<T, decltype(r)::value><<<blocks_for(g.slice), kThreads, 0, stream>>>(
          indices, indices32, static_cast<const T*>(updates), static_cast<T*>(dst), g);
      return cudaGetLastError();
    });
  });
}

}  // namespace ucudnn::cuda
