// Launchers of GatherElements', ScatterElements' and ScatterND's CUDA kernels (runtime/cuda/indexing_kernels.cu;
// the ops: runtime/ops/indexing.h). Same contracts as kernels.h: each only queues work on `stream` and
// returns the launch error; int64 index arithmetic. The index values must have been checked against their
// dims (the callers do, on the host); a negative one counts from the end.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "runtime/cuda/kernels.h"

namespace ucudnn::cuda {

// The Elements ops' geometry: indices' dims (the walk), data's element strides, and the indexed axis.
struct ElementsGeometry {
  int rank = 0;
  int axis = 0;
  int64_t axis_dim = 0;
  int64_t dims[kMaxDims] = {};
  int64_t strides[kMaxDims] = {};
};

// ScatterND's geometry: k-tuples into the first k dims of data (their element strides), slices of `slice`
// elements each.
struct TupleGeometry {
  int k = 0;
  int64_t tuples = 0;
  int64_t slice = 0;
  int64_t dims[kMaxDims] = {};
  int64_t strides[kMaxDims] = {};
};

// `reduction`: a ucudnn::ScatterReduction as an int; `dtype`: a ucudnn::DType as an int (float32, int32 or
// int64 for a reduction; any with element_bytes 1, 2, 4 or 8 for a plain write). cudaErrorInvalidValue for
// another.

// dst[i] = data[i's coordinates in indices, with indices[i] on the axis]; n = indices' element count.
cudaError_t launch_gather_elements(const void* data, const void* indices, bool indices32, void* dst,
                                   size_t element_bytes, int64_t n, const ElementsGeometry& g, cudaStream_t stream);

// dst (already data's copy) updated at every element of indices: one thread per line along the axis, the
// line's elements in order.
cudaError_t launch_scatter_elements(int reduction, int dtype, size_t element_bytes, const void* indices,
                                    bool indices32, const void* updates, void* dst, int64_t n,
                                    const ElementsGeometry& g, cudaStream_t stream);

// dst (already data's copy) updated at every tuple's slice: one thread per element of a slice, the tuples in
// order.
cudaError_t launch_scatter_nd(int reduction, int dtype, size_t element_bytes, const void* indices, bool indices32,
                              const void* updates, void* dst, const TupleGeometry& g, cudaStream_t stream);

}  // namespace ucudnn::cuda
